package io.fabricrpc.aggregation;

import io.fabricrpc.messaging.IdleHandshake;

import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;

/**
 * The helper that keeps calls from waiting forever in a batch when their sender goes idle: while any aggregator may
 * hold unsent calls, every {@value #PERIOD_NANOS} ns (a tick) it lets each such aggregator push out what has waited
 * up to its maxDelay ({@link Aggregator#pushOutOverdue}). One daemon thread per JVM, started with the first
 * aggregator.
 *
 * <p>While no aggregator holds unsent calls, the thread parks without a timeout, so an idle process stays idle
 * (polling every 200 us cost about 6% of a core per JVM here, measured). An aggregator sets its
 * {@link Aggregator#unsentMayWait()} flag (a volatile store), then wakes the thread: {@link IdleHandshake} makes sure
 * the thread either sees the flag in its last look or is unparked.
 */
final class AggregationFlusher {
    static final long PERIOD_NANOS = 200_000;
    private static final CopyOnWriteArrayList<Aggregator> AGGREGATORS = new CopyOnWriteArrayList<>();
    private static final IdleHandshake SLEEP = new IdleHandshake(AggregationFlusher::anyMayWait);
    private static volatile Thread thread;

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

    /** An aggregator's caller, right after it set its flag: wakes the flusher if it parked (or is about to). */
    static void wakeIfAsleep() {
        SLEEP.wake();
    }

    /** Whether the flusher parked for want of unsent calls (tests). */
    static boolean isAsleep() {
        return SLEEP.isAsleep();
    }

    /** The flusher thread, or null before the first aggregator (tests). */
    static Thread thread() {
        return thread;
    }

    private static void run() {
        while (true) {
            if (pushOutDue(System.nanoTime())) {
                LockSupport.parkNanos(PERIOD_NANOS);
                continue;
            }
            SLEEP.parkUnlessWork(0); // until an aggregator's wakeIfAsleep (or early: the loop looks again)
        }
    }

    /** Pushes out every aggregator's overdue calls; true while some aggregator may still hold unsent calls. */
    private static boolean pushOutDue(long now) {
        boolean waiting = false;
        for (Aggregator aggregator : AGGREGATORS) {
            if (aggregator.isClosed() || !aggregator.unsentMayWait()) {
                continue;
            }
            try {
                waiting |= aggregator.pushOutOverdue(now);
            } catch (RuntimeException e) {
                // A dead destination, typically: its sender learns it when it next publishes or flushes. Not retried
                // every period.
                aggregator.clearUnsentMayWait();
                System.getLogger("fabricrpc.aggregation").log(System.Logger.Level.WARNING,
                        "cannot push out the calls of " + aggregator + ": " + e, e);
            }
        }
        return waiting;
    }

    private static boolean anyMayWait() {
        for (Aggregator aggregator : AGGREGATORS) {
            if (!aggregator.isClosed() && aggregator.unsentMayWait()) {
                return true;
            }
        }
        return false;
    }
}
