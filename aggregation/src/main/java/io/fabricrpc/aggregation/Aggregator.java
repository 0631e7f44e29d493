package io.fabricrpc.aggregation;

import io.fabricrpc.messaging.Messenger;
import io.fabricrpc.messaging.MessengerDecorator;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * An aggregator on top of one messenger (Seriema's {@code RDMAAggregator}): one per sender thread and destination,
 * created on demand by the aggregating fabric view. The sender thread uses it; its fabric's agent ({@link AggregationDuty})
 * pushes out calls that waited up to {@code maxDelay} ({@link #pushOutOverdue}). How the two stay out of each
 * other's way is each mode's own: TRADITIONAL's calls take no lock (the messenger orders its appends and another
 * thread's publication), OVERFLOW's exceeding path takes the aggregator's drain claim ({@link io.fabricrpc.messaging.DrainClaim}).
 */
abstract sealed class Aggregator extends MessengerDecorator permits TraditionalAggregator, OverflowAggregator {
    private static final VarHandle BATCHES;
    private static final VarHandle FLUSHES;
    private static final VarHandle PUSH_OUTS;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            BATCHES = lookup.findVarHandle(Aggregator.class, "batches", long.class);
            FLUSHES = lookup.findVarHandle(Aggregator.class, "flushes", long.class);
            PUSH_OUTS = lookup.findVarHandle(Aggregator.class, "pushOuts", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final AggregationConfig config;
    final long maxDelayNanos;
    /** The fabric's aggregation duty on its agent: pushes out what waits up to maxDelay. */
    private final AggregationDuty duty;
    private volatile boolean closed;
    // ---- sender thread ----
    /** Counts the sender's notes that a call stays unsent (volatile store: the agent's look pairs with it). */
    private volatile long marks;
    /**
     * Counts for the counters file, read there with opaque loads. trad: full batches and flushes (sender), push-outs
     * of a quiet sender's batch (agent). ovfl: writes of waiting calls, flushes and the agent's drains, each by the
     * holder of the drain claim.
     */
    long batches;
    long flushes;
    long pushOuts;
    // ---- agent thread ----
    /** The marks the agent has seen answered (nothing unsent after them), and a watch revived from outside. */
    private long seenMarks;
    private boolean revived;

    Aggregator(Messenger messenger, AggregationConfig config, AggregationDuty duty) {
        super(messenger);
        this.config = config;
        this.maxDelayNanos = config.maxDelay().toNanos();
        this.duty = duty;
        duty.register(this);
    }

    /**
     * Agent, every tick while {@link #unsentMayWait()}: pushes out what waits longer than the mode allows.
     *
     * @return true while calls may still wait (look again next tick)
     */
    abstract boolean pushOutOverdue(long now);

    /**
     * The sender, holding the aggregator's drain claim (OVERFLOW), when a call stays unsent: the agent must look at
     * this aggregator from now on.
     */
    final void noteUnsent() {
        markUnsent();
    }

    /**
     * The sender, without a claim (TRADITIONAL), after appending the first call of a batch: a volatile store after the
     * append's own stores, then the wake-up's volatile load (IdleHandshake); {@link #stopWatching} pairs with it.
     */
    final void markUnsent() {
        marks = marks + 1; // sender only
        duty.wakeIfAsleep();
    }

    /**
     * Agent, having found nothing unsent: stops watching unless a call turns out to wait after all. The marks are read
     * (acquire) before the look, so the look sees the append of every mark counted; a later mark is looked at again.
     *
     * @return true if the agent stopped watching
     */
    final boolean stopWatching(java.util.function.BooleanSupplier nothingWaits) {
        long seen = marks;
        if (!nothingWaits.getAsBoolean()) {
            return false;
        }
        seenMarks = seen;
        revived = false;
        return marks == seen;
    }

    /**
     * Agent, at an idle look: whether calls wait unsent although no mark is new (racy; a hint that revives the watch).
     * Only a mode whose sender marks without a claim needs it.
     */
    boolean unpublishedSeenFromOutside() {
        return false;
    }

    /** Agent, at an idle look: watches again if calls wait after all. */
    final boolean revive() {
        if (!unsentMayWait() && unpublishedSeenFromOutside()) {
            revived = true;
        }
        return unsentMayWait();
    }

    /** Agent: whether calls may wait unsent (a mark not yet answered, or a revived watch). */
    final boolean unsentMayWait() {
        return revived || marks != seenMarks;
    }

    /** Agent, holding the aggregator's drain claim with nothing unsent in it (OVERFLOW), or giving up on it. */
    final void clearUnsentMayWait() {
        seenMarks = marks;
        revived = false;
    }

    @Override
    public io.fabricrpc.counters.CounterSource counters() {
        String name = io.fabricrpc.counters.CounterTypes.channel(messenger.sender(), messenger.destination());
        return new io.fabricrpc.counters.CounterSet(
                counter("aggregation batches " + name, io.fabricrpc.counters.CounterTypes.AGGREGATION_BATCHES, BATCHES),
                counter("aggregation flushes " + name, io.fabricrpc.counters.CounterTypes.AGGREGATION_FLUSHES, FLUSHES),
                counter("aggregation push-outs " + name, io.fabricrpc.counters.CounterTypes.AGGREGATION_PUSH_OUTS,
                        PUSH_OUTS));
    }

    private io.fabricrpc.counters.CounterSet.Counter counter(String label, int type, VarHandle count) {
        return new io.fabricrpc.counters.CounterSet.Counter(label, type, () -> (long) count.getOpaque(this));
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public void close() {
        closed = true;
        duty.unregister(this);
        messenger.close();
    }
}
