package io.fabricrpc.aggregation;

import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;

/**
 * The helper that keeps calls from waiting forever in a batch when their sender goes idle: every
 * {@value #PERIOD_NANOS} ns it takes each free aggregator and pushes out what is older than its maxDelay.
 * One daemon thread per JVM, started with the first aggregator.
 */
final class AggregationFlusher {
    static final long PERIOD_NANOS = 200_000;
    private static final CopyOnWriteArrayList<Aggregator> AGGREGATORS = new CopyOnWriteArrayList<>();
    private static Thread thread;

    private AggregationFlusher() {
    }

    static synchronized void register(Aggregator aggregator) {
        AGGREGATORS.add(aggregator);
        if (thread == null) {
            thread = Thread.ofPlatform().daemon().name("fabricrpc-aggregation-flusher").start(AggregationFlusher::run);
        }
    }

    static void unregister(Aggregator aggregator) {
        AGGREGATORS.remove(aggregator);
    }

    private static void run() {
        while (true) {
            long now = System.nanoTime();
            for (Aggregator aggregator : AGGREGATORS) {
                if (aggregator.isClosed() || !aggregator.tryAcquire()) {
                    continue; // its sender holds it, so its sender will push it out
                }
                try {
                    aggregator.flushIfDue(now);
                } catch (RuntimeException e) {
                    System.getLogger("fabricrpc.aggregation").log(System.Logger.Level.WARNING,
                            "cannot push out the calls of " + aggregator + ": " + e, e);
                } finally {
                    aggregator.release();
                }
            }
            LockSupport.parkNanos(PERIOD_NANOS);
        }
    }
}
