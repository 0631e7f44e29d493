package io.fabricrpc.aggregation;

import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;

/**
 * The helper that keeps calls from waiting forever in a batch when their sender goes idle: while any aggregator may
 * hold unsent calls, every {@value #PERIOD_NANOS} ns it takes each such aggregator that is free and pushes out what
 * is older than its maxDelay. One daemon thread per JVM, started with the first aggregator.
 *
 * <p>While no aggregator holds unsent calls, the thread parks without a timeout, so an idle process stays idle
 * (polling every 200 us cost about 6% of a core per JVM here, measured). No lost wake-up, by a Dekker handshake
 * on two volatile flags: an aggregator sets its {@link Aggregator#unsentMayWait()} flag, then reads {@link #asleep}
 * and unparks the thread if it is set; the thread sets {@code asleep}, then reads every aggregator's flag and parks
 * only if all are clear. Volatile accesses are sequentially consistent, so at least one side sees the other's store.
 */
final class AggregationFlusher {
    static final long PERIOD_NANOS = 200_000;
    private static final CopyOnWriteArrayList<Aggregator> AGGREGATORS = new CopyOnWriteArrayList<>();
    private static volatile Thread thread;
    /** Set by the flusher before its last look at the aggregators' flags and its untimed park. */
    private static volatile boolean asleep;

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
        if (asleep) { // volatile load after the caller's volatile store of its flag: the handshake's second half
            LockSupport.unpark(thread);
        }
    }

    /** Whether the flusher parked for want of unsent calls (tests). */
    static boolean isAsleep() {
        return asleep;
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
            asleep = true; // volatile store, then a last look at the flags: the handshake's first half
            if (!anyMayWait()) {
                LockSupport.park(); // until an aggregator's wakeIfAsleep (or spuriously: the loop looks again)
            }
            asleep = false;
        }
    }

    /** Pushes out every free aggregator's overdue calls; true while some aggregator may still hold unsent calls. */
    private static boolean pushOutDue(long now) {
        boolean waiting = false;
        for (Aggregator aggregator : AGGREGATORS) {
            if (aggregator.isClosed() || !aggregator.unsentMayWait()) {
                continue;
            }
            if (!aggregator.tryAcquire()) {
                waiting = true; // its sender holds it, so its sender will push it out, or leave it to us later
                continue;
            }
            try {
                aggregator.flushIfDue(now);
                if (aggregator.holdsUnsent()) {
                    waiting = true;
                } else {
                    aggregator.clearUnsentMayWait(); // held: its sender cannot be adding a call meanwhile
                }
            } catch (RuntimeException e) {
                // A dead destination, typically: its sender learns it on its next call. Not retried every period.
                aggregator.clearUnsentMayWait();
                System.getLogger("fabricrpc.aggregation").log(System.Logger.Level.WARNING,
                        "cannot push out the calls of " + aggregator + ": " + e, e);
            } finally {
                aggregator.release();
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
