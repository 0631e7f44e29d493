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
    private static final VarHandle UNSENT_MAY_WAIT;

    static {
        try {
            UNSENT_MAY_WAIT = MethodHandles.lookup().findVarHandle(Aggregator.class, "unsentMayWait", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final AggregationConfig config;
    final long maxDelayNanos;
    /** The fabric's aggregation duty on its agent: pushes out what waits up to maxDelay. */
    private final AggregationDuty duty;
    private volatile boolean closed;
    /**
     * True from a call that stays unsent in this aggregator until the agent finds none left
     * ({@link #stopWatching}, {@link #clearUnsentMayWait}); the agent looks only at aggregators where it is set.
     */
    private volatile boolean unsentMayWait;

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
     * this aggregator from now on. The agent clears the flag only holding the same claim.
     */
    final void noteUnsent() {
        if (!unsentMayWait) {
            unsentMayWait = true; // volatile store before the wake-up's volatile load (IdleHandshake)
            duty.wakeIfAsleep();
        }
    }

    /**
     * The sender, without a claim (TRADITIONAL), after appending the first call of a batch: always a volatile store,
     * after the append's own stores; {@link #stopWatching} pairs with it.
     */
    final void markUnsent() {
        unsentMayWait = true; // volatile store before the wake-up's volatile load (IdleHandshake)
        duty.wakeIfAsleep();
    }

    /**
     * Agent, having found nothing unsent: clears the flag unless a call turns out to wait after all. The CAS reads
     * the sender's latest {@link #markUnsent} store if there is one, so the look after it sees that call's append;
     * a store after the CAS leaves the flag set.
     *
     * @return true if the flag stays cleared
     */
    final boolean stopWatching(java.util.function.BooleanSupplier nothingWaits) {
        if (!UNSENT_MAY_WAIT.compareAndSet(this, true, false)) {
            return !unsentMayWait;
        }
        if (nothingWaits.getAsBoolean()) {
            return true;
        }
        unsentMayWait = true;
        return false;
    }

    /**
     * Agent, at an idle look: whether calls wait unsent although the flag is clear (racy; a hint that sets the flag).
     * Only a mode whose sender marks without a lock needs it.
     */
    boolean unpublishedSeenFromOutside() {
        return false;
    }

    /** Agent, at an idle look: sets the flag again if calls wait after all. */
    final boolean revive() {
        if (!unsentMayWait && unpublishedSeenFromOutside()) {
            unsentMayWait = true;
        }
        return unsentMayWait;
    }

    final boolean unsentMayWait() {
        return unsentMayWait;
    }

    /** Agent, holding the aggregator's drain claim, with nothing unsent in it (OVERFLOW). */
    final void clearUnsentMayWait() {
        unsentMayWait = false;
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
