package io.fabricrpc.invocation;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.RemoteContextConsumer;
import io.fabricrpc.api.JobConfig;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.api.MessengerConfig;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One rank of a cross-process fabric test, started by {@link io.fabricrpc.fabric.LocalLauncher}; the transport
 * comes from system properties. Prints machine-readable lines the test waits for.
 * <ul>
 *   <li>{@code stress N}: every worker sends N calls to every worker; each checks per-sender order and count;
 *       prints {@code STRESS_OK rank=R received=C}.</li>
 *   <li>{@code killed-peer}: rank 1 runs calls that never return (prints {@code IN_CALL}); rank 0 waits on them
 *       with a blocking and an asynchronous callReturn, and a third thread of rank 0 sends one-way calls to the
 *       busy worker until the full buffers block it (prints {@code SENDER_BLOCKED}). Once all three end it prints
 *       {@code FAILED at=<epoch µs> async=... blocking=... sender=...}, closes the fabric and prints
 *       {@code CLOSED leftover=[names of threads still running 5 s after the close]}.</li>
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

    /** {@code -Dfabricrpc.test.perRank.KEY=v0,v1,...} sets {@code KEY} to this rank's value (e.g. a host id per rank). */
    static final String PER_RANK_PREFIX = "fabricrpc.test.perRank.";

    private static void applyPerRankProperties() {
        String rankText = System.getenv(JobConfig.ENV_RANK);
        if (rankText == null) {
            return;
        }
        int rank = Integer.parseInt(rankText);
        for (String name : System.getProperties().stringPropertyNames()) {
            if (name.startsWith(PER_RANK_PREFIX)) {
                String[] values = System.getProperty(name).split(",");
                if (rank >= values.length) {
                    throw new IllegalArgumentException(name + " has " + values.length + " values, none for rank " + rank);
                }
                System.setProperty(name.substring(PER_RANK_PREFIX.length()), values[rank].trim());
            }
        }
    }

    public static void main(String[] args) throws Exception {
        applyPerRankProperties();
        // Small buffers for killed-peer, so that a sender fills them (and blocks) after a few hundred calls.
        MessengerConfig messenger = args[0].equals("killed-peer") ? MessengerConfig.defaults().withChunks(4096, 1, 2)
                : MessengerConfig.defaults();
        FabricConfig config = FabricConfig.of(JobConfig.fromEnvironment(), LocalJob.registry()).withMessenger(messenger);
        Set<Thread> before = Thread.getAllStackTraces().keySet();
        Fabric fabric = Fabric.join(config);
        switch (args[0]) {
            case "stress" -> stress(fabric, Long.parseLong(args[1]));
            case "killed-peer" -> killedPeer(fabric, before);
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
                try {
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
                } catch (RuntimeException e) {
                    inbox.error = "worker " + worker + " failed: " + e; // read by main after join
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

    private static void killedPeer(Fabric fabric, Set<Thread> before) throws Exception {
        if (fabric.rank() == 1) {
            fabric.startHandlerThreads();
            Thread.sleep(Long.MAX_VALUE); // killed by the test
        }
        ThreadId busy = new ThreadId(1, 0);
        CompletableFuture<Object> async = fabric.callReturnAsync(busy, () -> {
            System.out.println("IN_CALL");
            System.out.flush();
            return sleepForever();
        });
        String[] blockingOutcome = {"running"};
        Thread blocking = Thread.ofPlatform().start(() -> blockingOutcome[0] =
                outcome(() -> fabric.callReturn(new ThreadId(1, 1), FabricScenarioMain::sleepForever)));
        AtomicLong sent = new AtomicLong();
        String[] senderOutcome = {"running"};
        Thread sender = Thread.ofPlatform().start(() -> senderOutcome[0] = outcome(() -> {
            for (long i = 0; i < 1_000_000; i++) { // the worker is busy for ever: its buffers fill long before
                fabric.call(busy, () -> { });
                sent.incrementAndGet();
            }
            return "returned";
        }));
        long last = -1;
        while (sender.isAlive() && sent.get() != last) { // blocked once no call got through for 500 ms
            last = sent.get();
            Thread.sleep(500);
        }
        System.out.println("SENDER_BLOCKED after " + last + " calls");
        System.out.flush();
        String asyncOutcome;
        try {
            async.get(60, TimeUnit.SECONDS);
            asyncOutcome = "returned";
        } catch (java.util.concurrent.ExecutionException e) {
            asyncOutcome = e.getCause().getClass().getSimpleName();
        }
        blocking.join(60_000);
        sender.join(60_000);
        long at = ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
        System.out.println("FAILED at=" + at + " async=" + asyncOutcome + " blocking=" + blockingOutcome[0]
                + " sender=" + senderOutcome[0]);
        System.out.flush();
        fabric.close();
        System.out.println("CLOSED leftover=" + threadsOutliving(before, 5_000));
        System.out.flush();
    }

    private static String outcome(java.util.function.Supplier<Object> action) {
        try {
            action.get();
            return "returned";
        } catch (RuntimeException e) {
            return e.getClass().getSimpleName();
        }
    }

    /** Names of the threads started since {@code before} that are still alive after waiting up to the timeout. */
    private static List<String> threadsOutliving(Set<Thread> before, long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (true) {
            List<String> left = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.isAlive() && t != Thread.currentThread() && !before.contains(t))
                    .map(Thread::getName).sorted().toList();
            if (left.isEmpty() || System.nanoTime() > deadline) {
                return left;
            }
            Thread.sleep(20);
        }
    }
}
