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
 * <p>While no aggregator holds unsent calls, the thread parks for {@value #IDLE_LOOK_NANOS} ns at a time, so an idle
 * process stays idle (polling every 200 us cost about 6% of a core per JVM here, measured). An aggregator sets its
 * {@link Aggregator#unsentMayWait()} flag (a volatile store), then wakes the thread: {@link IdleHandshake} makes sure
 * the thread either sees the flag in its last look or is unparked. Each idle look also revives the watch of a
 * TRADITIONAL aggregator whose calls wait with the flag clear ({@link Aggregator#revive}), so a mark lost to a race
 * with this thread's own publication delays a batch by one idle look at most instead of leaving it unsent.
 */
final class AggregationFlusher {
    static final long PERIOD_NANOS = 200_000;
    /** While nothing waits, the flusher still looks this often (ten cheap looks a second keep an idle JVM idle). */
    static final long IDLE_LOOK_NANOS = 100_000_000;
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
            // Until an aggregator's wakeIfAsleep, and at most IDLE_LOOK_NANOS: a sender's append judged against a
            // publication this thread was still making is seen at the next look at the latest (bounded, not lost).
            SLEEP.parkUnlessWork(IDLE_LOOK_NANOS);
            anyMayWait();
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

    /** The last look before parking, and the look after a park timed out: revives a watch a sender's mark missed. */
    private static boolean anyMayWait() {
        for (Aggregator aggregator : AGGREGATORS) {
            if (!aggregator.isClosed() && aggregator.revive()) {
                return true;
            }
        }
        return false;
    }
}
