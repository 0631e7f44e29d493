package io.fabricrpc.invocation;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.JobConfig;
import io.fabricrpc.api.ThreadId;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Child JVMs of {@link MailboxCallsTest}'s allocation check: rank 0 measures the bytes its thread allocates per
 * steady-state {@code callReturn} to rank 1, in a JVM no other test has shaped (a suite's other channel and
 * writer classes make call sites megamorphic, and escape analysis then gives up). Prints one ALLOCATED line.
 */
public final class AllocationProbeMain {
    static final AtomicLong ONE_WAY = new AtomicLong();

    private AllocationProbeMain() {
    }

    public static void main(String[] args) {
        try (Fabric fabric = Fabric.join(FabricConfig.of(JobConfig.fromEnvironment(), LocalJob.registry()))) {
            if (fabric.rank() != 0) {
                fabric.startHandlerThreads(); // they serve until rank 0 closes (close is a barrier)
                return;
            }
            fabric.attach(0, null);
            ThreadId dest = new ThreadId(1, 0);
            // Results are small Longs (cached): whatever is allocated is the call path's own.
            double plain = bytesPerCall(10_000, () -> check(fabric.callReturn(dest, () -> 7L)));
            // After a one-way call the request carries the messenger channel's order (sender, records sent).
            fabric.call(dest, () -> ONE_WAY.incrementAndGet());
            double ordered = bytesPerCall(10_000, () -> check(fabric.callReturn(dest, () -> 7L)));
            System.out.println("ALLOCATED plain=" + plain + " ordered=" + ordered);
        }
    }

    private static void check(long result) {
        if (result != 7L) {
            throw new AssertionError("callReturn returned " + result);
        }
    }

    /** The lowest bytes per call over rounds of {@code calls}, until compiled (the interpreter allocates). */
    private static double bytesPerCall(int calls, Runnable body) {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long self = Thread.currentThread().threadId();
        double best = Double.MAX_VALUE;
        for (int round = 0; round < 40 && best > 8; round++) {
            long before = threads.getThreadAllocatedBytes(self);
            for (int i = 0; i < calls; i++) {
                body.run();
            }
            best = Math.min(best, (threads.getThreadAllocatedBytes(self) - before) / (double) calls);
        }
        return best;
    }
}
