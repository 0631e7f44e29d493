package io.fabricrpc.invocation;

import io.fabricrpc.api.Synchronizer;
import io.fabricrpc.fabric.ControlPlane;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import static io.fabricrpc.invocation.FaultScenarioMain.block;
import static io.fabricrpc.invocation.FaultScenarioMain.describe;
import static io.fabricrpc.invocation.FaultScenarioMain.now;
import static io.fabricrpc.invocation.FaultScenarioMain.outcome;
import static io.fabricrpc.invocation.FaultScenarioMain.print;

/** The scenario bodies of {@link FaultScenarioMain}, one method per scenario, run on the rank's main thread. */
final class FaultScenarios {
    private FaultScenarios() {
    }

    static final AtomicLong STREAMED = new AtomicLong();

    /** Runs the calls of the attached worker until {@code done}, at most {@code millis}; false on the timeout. */
    private static boolean serveUntil(FabricRuntime fabric, BooleanSupplier done, long millis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            if (fabric.processCalls() == 0) {
                Thread.onSpinWait();
            }
        }
        return true;
    }

    private static boolean waitFor(BooleanSupplier done, long millis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            block(5);
        }
        return true;
    }

    /** {@code close()} outcome, bounded: a close that hangs is reported as such, not waited for. */
    private static String closeOutcome(FabricRuntime fabric, long seconds) {
        CompletableFuture<Object> closing = CompletableFuture.supplyAsync(() -> {
            fabric.close();
            return "closed";
        }, runnable -> Thread.ofPlatform().daemon().start(runnable));
        return outcome(closing, seconds);
    }

    static void stall(FabricRuntime fabric) {
        ControlPlane plane = fabric.controlPlane();
        switch (fabric.rank()) {
            case 0 -> {
                fabric.startHandlerThreads();
                print("READY");
            }
            case 1 -> {
                fabric.attach(0);
                print("READY");
                if (!serveUntil(fabric, () -> FaultScenarioMain.RAN.get() >= 2000, 60_000)
                        || !serveUntil(fabric, () -> plane.failure(2) != null, 60_000)) {
                    print("RESULT error=no-verdict ran=" + FaultScenarioMain.RAN.get());
                    return;
                }
                long askedAt = now(); // this worker just saw the verdict
                String send = FaultScenarioMain.outcome(() -> {
                    fabric.call(new ThreadId(2, 0), () -> { });
                    fabric.flush();
                    return "sent";
                });
                long refusedAt = now();
                print("SEND_TO_FAILED at=" + refusedAt + " asked_at=" + askedAt + " outcome=" + send);
                serveUntil(fabric, () -> false, 6_000); // the stalled rank resumes meanwhile and sends again
                print("RESULT ran=" + FaultScenarioMain.RAN.get() + " ran_after_fence="
                        + FaultScenarioMain.RAN_AFTER_FENCE.get());
            }
            default -> {
                fabric.attach(0);
                // A deadline far past the test's steps: the fence, not the clock, must end this call, even in a slow guest.
                CompletableFuture<Integer> pending = fabric.callReturnAsync(new ThreadId(0, 0), Duration.ofMinutes(5),
                        () -> block(120_000));
                print("READY");
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
                Throwable end = null;
                long sentAfterStall = 0;
                try {
                    for (long s = 0, last = System.nanoTime(); System.nanoTime() < deadline; s++) {
                        long t = System.nanoTime();
                        sentAfterStall = t - last > 500_000_000L ? 0 : sentAfterStall + 1; // counts from the resume
                        last = t;
                        fabric.call(new ThreadId(1, 0), FaultScenarioMain::ranFromStalled);
                        if ((s & 63) == 0) {
                            fabric.processCalls();
                        }
                        if (s == 4000) {
                            print("STREAMING");
                        }
                    }
                } catch (Throwable e) {
                    end = e;
                }
                print("SELF_FENCED at=" + now() + " sent_after_resume=" + sentAfterStall + " error=" + describe(end));
                String pendingOutcome = outcome(pending, 10);
                String call = outcome(() -> fabric.call(new ThreadId(0, 0), () -> { }));
                String callReturn = outcome(() -> fabric.callReturn(new ThreadId(1, 0), () -> 1));
                print("STALLED pending=" + pendingOutcome + " | call=" + call + " | callReturn=" + callReturn
                        + " | close=" + closeOutcome(fabric, 15));
            }
        }
    }

    static void coordinator(FabricRuntime fabric) {
        fabric.startHandlerThreads();
        if (fabric.rank() == 0) {
            print("READY");
            return;
        }
        ThreadId other = new ThreadId(3 - fabric.rank(), 0);
        CompletableFuture<Integer> pending = fabric.callReturnAsync(other, Duration.ofMinutes(5), () -> block(120_000));
        print("READY");
        String pendingOutcome = outcome(pending, 20);
        long at = now();
        String call = outcome(() -> {
            fabric.call(other, () -> { });
            fabric.flush();
            return "sent";
        });
        String callReturn = outcome(() -> fabric.callReturn(other, () -> 1));
        var lost = fabric.controlPlane().failure(0);
        print("LOST at=" + at + " pending=" + pendingOutcome + " | call=" + call + " | callReturn=" + callReturn
                + " | rank0=" + (lost == null ? "alive" : lost.reason()) + " | close=" + closeOutcome(fabric, 15));
    }

    static void bcastRan(int n) {
        print("BCAST_RAN n=" + n + " thread=" + Thread.currentThread().getName());
    }

    static void broadcast(FabricRuntime fabric) {
        if (fabric.rank() != 0) {
            fabric.startHandlerThreads();
            print("READY");
            return;
        }
        fabric.attach(0);
        fabric.startHandlerThreads();
        print("READY");
        Synchronizer sync = FaultScenarioMain.consumed();
        fabric.broadcast(() -> bcastRan(1), sync);
        sync.await(Duration.ofSeconds(60));
        print("BCAST1_DONE");
        // Worker 1/1 forwards this broadcast to rank 2 (the tree rooted at worker 0 of 3 x 2): keep it busy first.
        fabric.call(new ThreadId(1, 1), () -> {
            print("BUSY");
            block(60_000);
        });
        fabric.broadcast(() -> bcastRan(2), sync);
        print("BCAST2_SENT at=" + now());
        String result = outcome(() -> {
            sync.await(Duration.ofSeconds(30));
            return "all";
        });
        print("BCAST2 at=" + now() + " outcome=" + result);
        String live = outcome(() -> fabric.callReturn(new ThreadId(2, 0), () -> 20) + ","
                + fabric.callReturn(new ThreadId(2, 1), () -> 21));
        print("LIVE_AFTER " + live);
    }

    static void midstream(FabricRuntime fabric) throws InterruptedException {
        if (fabric.rank() == 0) {
            fabric.startHandlerThreads();
            print("READY");
            ControlPlane plane = fabric.controlPlane();
            if (!waitFor(() -> plane.failure(1) != null, 120_000)) {
                print("RECEIVED error=no-verdict");
                return;
            }
            block(1000); // calls still in the chunks are refused meanwhile, never run in part
            print("RECEIVED oneway=" + FaultScenarioMain.RAN.get() + " streamed=" + STREAMED.get() + " corrupt="
                    + FaultScenarioMain.CORRUPT.get() + " out_of_order=" + FaultScenarioMain.OUT_OF_ORDER.get());
            print("ALIVE " + outcome(() -> fabric.callReturn(new ThreadId(0, 0), () -> 7)));
            return;
        }
        print("READY");
        AtomicLong oneway = new AtomicLong();
        AtomicLong streamed = new AtomicLong();
        Thread a = Thread.ofPlatform().start(() -> {
            fabric.attach(0);
            for (long s = 0; ; s++) {
                long sequence = s;
                byte[] bytes = FaultScenarioMain.payload(s, 4000);
                fabric.call(new ThreadId(0, 0), () -> FaultScenarioMain.check(sequence, bytes, 4000, true));
                oneway.incrementAndGet();
                if ((s & 63) == 0) {
                    fabric.processCalls();
                }
            }
        });
        Thread b = Thread.ofPlatform().start(() -> {
            fabric.attach(1);
            for (long s = 0; ; s++) {
                long sequence = s;
                byte[] bytes = FaultScenarioMain.payload(s, 300_000); // streamed through the 1 KiB mailbox slots
                long back = fabric.callReturn(new ThreadId(0, 1), () -> {
                    STREAMED.incrementAndGet();
                    return FaultScenarioMain.check(sequence, bytes, 300_000, false);
                });
                if (back != sequence) {
                    print("WRONG_RESULT " + back + " for " + sequence);
                }
                streamed.incrementAndGet();
            }
        });
        waitFor(() -> oneway.get() >= 500 && streamed.get() >= 2, 60_000);
        print("STREAMING oneway=" + oneway.get() + " streamed=" + streamed.get());
        if (waitFor(() -> oneway.get() >= 5000, 60_000)) { // the test may kill this rank before
            print("STREAMED oneway=" + oneway.get() + " streamed=" + streamed.get());
        }
        a.join();
        b.join();
    }

    private static List<String> handlerThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(name -> name.startsWith("fabricrpc-handler-")).sorted().toList();
    }

    /** A callReturn of rank 0 to its own worker, bounded: that worker may hang on a faulting file. */
    private static String selfCall(FabricRuntime fabric) {
        try {
            return outcome(fabric.callReturnAsync(new ThreadId(0, 0), () -> 3), 1);
        } catch (Throwable e) {
            return describe(e);
        }
    }

    static void truncate(FabricRuntime fabric, AtomicReference<String> firstError) {
        ControlPlane plane = fabric.controlPlane();
        int peer = 1 - fabric.rank();
        AtomicReference<String> senderEnd = new AtomicReference<>("running");
        if (fabric.rank() == 0) {
            fabric.startHandlerThreads();
        } else {
            Thread.ofPlatform().daemon().start(() -> {
                try {
                    fabric.attach(0);
                    for (long s = 0; ; s++) {
                        fabric.call(new ThreadId(0, 0), FaultScenarioMain::ranFromStalled);
                        if ((s & 63) == 0) {
                            fabric.processCalls();
                        }
                    }
                } catch (Throwable e) {
                    senderEnd.set(describe(e));
                    print("SENDER_ENDED at=" + now() + " error=" + describe(e));
                }
            });
        }
        print("READY");
        for (int round = 0; round < 600; round++) { // the test reads the latest line, then kills the job
            block(250);
            String self = fabric.rank() != 0 ? "-" // rank 1's worker is its sender, which may have ended
                    : selfCall(fabric);
            var gone = plane.failure(peer);
            print("STATUS round=" + round + " ran=" + FaultScenarioMain.RAN.get() + " handlers=" + handlerThreads()
                    + " sender=" + senderEnd.get() + " peer=" + (gone == null ? "alive" : "failed")
                    + " error=" + firstError.get() + " | self=" + self);
        }
    }

    static void fill(FabricRuntime fabric) {
        fabric.startHandlerThreads();
        print("READY");
        if (fabric.rank() == 0) {
            return;
        }
        // A one-way call first: this thread's notify region exists, so the next new channel needs only the receiver's chunks.
        fabric.call(new ThreadId(0, 0), () -> { });
        fabric.flush();
        print("FIRST " + outcome(() -> fabric.callReturn(new ThreadId(0, 0), () -> 1)));
        List<LocalRegion> filler = new ArrayList<>();
        String full = "never";
        for (long size = 1 << 20; size >= 4096 && filler.size() < 10_000; ) {
            try {
                filler.add(fabric.allocate(size, RemoteAccess.WRITE));
            } catch (RuntimeException e) {
                full = describe(e);
                size /= 4;
            }
        }
        print("FILLED regions=" + filler.size() + " last=" + full);
        long start = System.nanoTime();
        String call = outcome(() -> {
            fabric.call(new ThreadId(0, 1), () -> { });
            fabric.flush();
            return "sent";
        });
        String callReturn = outcome(() -> fabric.callReturn(new ThreadId(0, 1), () -> 2));
        print("FULL ms=" + (System.nanoTime() - start) / 1_000_000 + " call=" + call + " | callReturn=" + callReturn);
        filler.forEach(LocalRegion::close);
        print("RECOVERED " + outcome(() -> fabric.callReturn(new ThreadId(0, 1), () -> 4)) + " | old="
                + outcome(() -> fabric.callReturn(new ThreadId(0, 0), () -> 5)));
    }
}
