package io.fabricrpc.aggregation;

import io.fabricrpc.messaging.Messenger;
import io.fabricrpc.messaging.RecordChannel;
import io.fabricrpc.transport.Link;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * An aggregator on top of one messenger (Seriema's {@code RDMAAggregator}): one per sender thread and destination,
 * created on demand by the aggregating fabric view. The sender thread uses it; the {@link AggregationFlusher}
 * thread pushes out calls that waited longer than {@code maxDelay}. The two hand the aggregator over through an
 * owner field (CAS to take it, release store to give it back; re-entrant for the owner, since a sender waiting for
 * room runs incoming calls that may send too), so neither ever sees the other's half-done work.
 */
abstract sealed class Aggregator implements RecordChannel permits TraditionalAggregator, OverflowAggregator {
    private static final VarHandle OWNER;

    static {
        try {
            OWNER = MethodHandles.lookup().findVarHandle(Aggregator.class, "owner", Thread.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final Messenger messenger;
    final AggregationConfig config;
    final long maxDelayNanos;
    @SuppressWarnings("unused") // through OWNER
    private volatile Thread owner;
    private int holds;
    private volatile boolean closed;
    /**
     * True from the first call that stays unsent in this aggregator until the flusher, holding the aggregator,
     * finds none left. Written only with the aggregator held; read by the flusher without it.
     */
    private volatile boolean unsentMayWait;

    Aggregator(Messenger messenger, AggregationConfig config) {
        this.messenger = messenger;
        this.config = config;
        this.maxDelayNanos = config.maxDelay().toNanos();
        AggregationFlusher.register(this);
    }

    /** Takes the aggregator for the calling thread, waiting while the flusher holds it (a short push). */
    final void acquire() {
        Thread me = Thread.currentThread();
        if ((Thread) OWNER.getAcquire(this) == me) {
            holds++;
            return;
        }
        while (!OWNER.compareAndSet(this, null, me)) { // acquire semantics: sees the last holder's writes
            Thread.onSpinWait();
        }
        holds = 1;
    }

    /** For the flusher: takes the aggregator only if nobody holds it. */
    final boolean tryAcquire() {
        if (OWNER.compareAndSet(this, null, Thread.currentThread())) {
            holds = 1;
            return true;
        }
        return false;
    }

    final void release() {
        if (--holds == 0) {
            OWNER.setRelease(this, null); // publishes this holder's writes to the next
        }
    }

    /** Flusher: push out what has waited longer than maxDelay. Called with the aggregator held. */
    abstract void flushIfDue(long now);

    /** Whether calls made through this aggregator wait in it, unsent. Called with the aggregator held. */
    abstract boolean holdsUnsent();

    /** With the aggregator held, when a call stays unsent: the flusher must look at this aggregator from now on. */
    final void noteUnsent() {
        if (!unsentMayWait) {
            unsentMayWait = true; // volatile store before the wake-up's volatile load (IdleHandshake)
            AggregationFlusher.wakeIfAsleep();
        }
    }

    final boolean unsentMayWait() {
        return unsentMayWait;
    }

    /** Flusher, with the aggregator held and nothing unsent in it. */
    final void clearUnsentMayWait() {
        unsentMayWait = false;
    }

    boolean isClosed() {
        return closed;
    }

    @Override
    public long consumedRecords() {
        return messenger.consumedRecords();
    }

    @Override
    public long lastTicket() {
        return messenger.lastTicket();
    }

    @Override
    public Link link() {
        return messenger.link();
    }

    /** The aggregator is taken (a lock) around its flush: any thread may run it. */
    @Override
    public void flushFromAnotherThread() {
        flush();
    }

    @Override
    public void publishDeferred() {
        messenger.publishDeferred(); // thread-safe on its own: no need to take the aggregator
    }

    @Override
    public long destination() {
        return messenger.destination();
    }

    @Override
    public void close() {
        closed = true;
        AggregationFlusher.unregister(this);
        messenger.close();
    }
}
