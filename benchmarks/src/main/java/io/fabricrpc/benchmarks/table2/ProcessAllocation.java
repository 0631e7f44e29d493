package io.fabricrpc.benchmarks.table2;

import java.lang.management.ManagementFactory;

/**
 * Bytes allocated by the threads of this JVM other than the calling one (service, flusher, liveness threads...),
 * between {@link #start()} and {@link #stop()}. The snapshots' own arrays are allocated by the calling thread, so
 * they are not counted; take them outside the calling thread's own measurement. Threads that end in between are
 * missed; threads that start in between count in full. Not thread-safe.
 */
final class ProcessAllocation {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private long[] ids = new long[0];
    private long[] before = new long[0];

    void start() {
        ids = others();
        before = THREADS.getThreadAllocatedBytes(ids);
    }

    long stop() {
        long[] now = others();
        long[] after = THREADS.getThreadAllocatedBytes(now);
        long total = 0;
        for (int i = 0; i < now.length; i++) {
            if (after[i] < 0) {
                continue; // ended meanwhile
            }
            long from = 0;
            for (int j = 0; j < ids.length; j++) {
                if (ids[j] == now[i]) {
                    from = Math.max(0, before[j]);
                    break;
                }
            }
            total += after[i] - from;
        }
        return total;
    }

    private static long[] others() {
        long self = Thread.currentThread().threadId();
        return java.util.Arrays.stream(THREADS.getAllThreadIds()).filter(id -> id != self).toArray();
    }
}
