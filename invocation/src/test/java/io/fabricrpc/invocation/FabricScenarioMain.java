package io.fabricrpc.invocation;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.RemoteContextConsumer;
import io.fabricrpc.fabric.JobConfig;
import io.fabricrpc.fabric.ThreadId;
import io.fabricrpc.messaging.MessengerConfig;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One rank of a cross-process fabric test, started by {@link io.fabricrpc.fabric.LocalLauncher}; the transport
 * comes from system properties. Prints machine-readable lines the test waits for.
 * <ul>
 *   <li>{@code stress N}: every worker sends N calls to every worker; each checks per-sender order and count;
 *       prints {@code STRESS_OK rank=R received=C}.</li>
 *   <li>{@code killed-peer}: rank 1 runs a call that never returns (prints {@code IN_CALL}); rank 0 waits on it
 *       with a blocking and an asynchronous callReturn, then prints {@code FAILED at=<epoch µs> async=... blocking=...}
 *       once both end.</li>
 * </ul>
 */
public final class FabricScenarioMain {
    private FabricScenarioMain() {
    }

    static int sleepForever() {
        try {
            Thread.sleep(Long.MAX_VALUE);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    public static void main(String[] args) throws Exception {
        FabricConfig config = FabricConfig.of(JobConfig.fromEnvironment(), LocalJob.registry())
                .withMessenger(MessengerConfig.defaults());
        Fabric fabric = Fabric.join(config);
        switch (args[0]) {
            case "stress" -> stress(fabric, Long.parseLong(args[1]));
            case "killed-peer" -> killedPeer(fabric);
            default -> throw new IllegalArgumentException("unknown scenario " + args[0]);
        }
        System.exit(0);
    }

    private static void stress(Fabric fabric, long perPair) throws Exception {
        int threads = fabric.threadsPerProcess();
        int workers = fabric.size() * threads;
        List<Thread> running = new ArrayList<>();
        List<FabricTest.Inbox> inboxes = new ArrayList<>();
        for (int index = 0; index < threads; index++) {
            FabricTest.Inbox inbox = new FabricTest.Inbox(workers);
            inboxes.add(inbox);
            int worker = index;
            running.add(Thread.ofPlatform().start(() -> {
                fabric.attach(worker, inbox);
                int me = fabric.rank() * threads + worker;
                for (long sequence = 0; sequence < perPair; sequence++) {
                    for (int dest = 0; dest < workers; dest++) {
                        long s = sequence;
                        fabric.call(new ThreadId(dest / threads, dest % threads),
                                (RemoteContextConsumer<FabricTest.Inbox>) box -> box.record(me, s), null);
                    }
                    if ((sequence & 63) == 0) {
                        fabric.processCalls();
                    }
                }
                while (inbox.received < perPair * workers) {
                    if (fabric.processCalls() == 0) {
                        Thread.onSpinWait();
                    }
                }
            }));
        }
        for (Thread thread : running) {
            thread.join();
        }
        long received = 0;
        for (FabricTest.Inbox inbox : inboxes) {
            if (inbox.error != null) {
                System.out.println("STRESS_FAILED rank=" + fabric.rank() + " " + inbox.error);
                System.exit(1);
            }
            received += inbox.received;
        }
        System.out.println("STRESS_OK rank=" + fabric.rank() + " received=" + received);
        fabric.close();
    }

    private static void killedPeer(Fabric fabric) throws Exception {
        if (fabric.rank() == 1) {
            fabric.startHandlerThreads();
            Thread.sleep(Long.MAX_VALUE); // killed by the test
        }
        ThreadId target = new ThreadId(1, 0);
        CompletableFuture<Object> async = fabric.callReturnAsync(target, () -> {
            System.out.println("IN_CALL");
            System.out.flush();
            return sleepForever();
        });
        CompletableFuture<String> blocking = CompletableFuture.supplyAsync(() -> {
            try {
                fabric.callReturn(new ThreadId(1, 1), FabricScenarioMain::sleepForever);
                return "returned";
            } catch (RuntimeException e) {
                return e.getClass().getSimpleName();
            }
        });
        String asyncOutcome;
        try {
            async.get(60, TimeUnit.SECONDS);
            asyncOutcome = "returned";
        } catch (java.util.concurrent.ExecutionException e) {
            asyncOutcome = e.getCause().getClass().getSimpleName();
        }
        String blockingOutcome = blocking.get(60, TimeUnit.SECONDS);
        long at = ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
        System.out.println("FAILED at=" + at + " async=" + asyncOutcome + " blocking=" + blockingOutcome);
        System.out.flush();
        fabric.close();
    }
}
