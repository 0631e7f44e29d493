package io.fabricrpc.aggregation;

import io.fabricrpc.messaging.Messenger;
import io.fabricrpc.messaging.RecordWriter;

/**
 * TRADITIONAL mode: every call is serialized at the chunk position it will occupy at the receiver, and the batch is
 * published at once when it holds {@code batchBytes}, on {@link #flush()}, or by the flusher once it has waited
 * {@code maxDelay} at most. Zero-copy: under RDMA the calls go into the messenger's registered staging memory and the
 * batch is one WRITE from there; under shared memory large calls (see {@code Messenger.WINDOW_APPEND_MIN_RECORD}) go
 * straight into the receiver's mapped chunk, unseen until the batch's first header is stored with release, so
 * publishing copies nothing; small ones are batched in staging and copied once per batch, which measured faster.
 *
 * <p>No lock and no clock per call. The sender appends; the flusher publishes what the sender left waiting through
 * {@link Messenger#publishAppendedFromAnotherThread}, which never races an append (Messenger's class doc). The
 * flusher tells a batch that waits from one that moves by the batch's start ({@link Messenger#unpublishedBatch}):
 * one seen at the same start for {@code ticksToPushOut} ticks in a row has waited at least that many ticks, and less
 * than one more, so it goes out before {@code maxDelay} (a tick is {@value AggregationDuty#PERIOD_NANOS} ns; a
 * maxDelay under two ticks is rounded up to two).
 */
final class TraditionalAggregator extends Aggregator {
    private final int batchBytes;
    private final int ticksToPushOut;
    /** Flusher thread only: the unpublished batch seen at its previous ticks, and for how many ticks since. */
    private long seenBatch = -1;
    private int ticksSeen;
    /** Sender thread only: the batch start ({@link Messenger#batchStart}) at this thread's latest mark, or -1. */
    private long markedBatch = -1;
    private final java.util.function.BooleanSupplier nothingWaits = () -> messenger.unpublishedBatch() < 0;

    TraditionalAggregator(Messenger messenger, AggregationConfig config, AggregationDuty duty) {
        super(messenger, config, duty);
        this.batchBytes = config.batchBytes();
        this.ticksToPushOut = (int) Math.max(1, Math.min(Integer.MAX_VALUE,
                maxDelayNanos / AggregationDuty.PERIOD_NANOS - 1));
    }

    @Override
    public boolean send(int tag, RecordWriter writer) {
        if (!messenger.append(tag, writer)) {
            return false;
        }
        if (messenger.stagedBytes() >= batchBytes) {
            messenger.publish();
            return true;
        }
        // Judged after the append: a batch start read before it could be a publication the flusher is still making,
        // and then the flusher may stop watching before it sees this call (a batch left unsent for good).
        long start = messenger.batchStart();
        if (start != markedBatch) {
            markedBatch = start;
            markUnsent(); // once per batch start this thread sees, after the append's own stores
        }
        return true;
    }

    @Override
    boolean pushOutOverdue(long now) {
        long batch = messenger.unpublishedBatch();
        if (batch < 0) {
            seenBatch = -1;
            return !stopWatching(nothingWaits);
        }
        if (batch != seenBatch) {
            seenBatch = batch; // the sender published since the last tick: what waits now is younger than a tick
            ticksSeen = 0;
        } else if (++ticksSeen >= ticksToPushOut) {
            messenger.publishAppendedFromAnotherThread();
            seenBatch = -1;
        }
        return true;
    }

    @Override
    public long recordsSent() {
        return messenger.recordsSent();
    }

    /** The sender's flush: the batch, and then the messenger's own flush. */
    @Override
    public void flush() {
        messenger.flush();
    }

    /** The sender, waiting on this channel: its batch goes out now rather than after maxDelay. */
    @Override
    public void publishBuffered() {
        messenger.publish();
    }

    @Override
    boolean unpublishedSeenFromOutside() {
        return messenger.unpublishedBatch() >= 0;
    }

    /** Publishes what the sender appended so far, without racing it (no lock on its appends). */
    @Override
    public void flushFromAnotherThread() {
        messenger.publishAppendedFromAnotherThread();
        messenger.publishDeferred();
    }

    @Override
    public long bufferedBytes() {
        return messenger.stagedBytes();
    }

    @Override
    public String toString() {
        return "TraditionalAggregator[" + messenger + ", batch " + batchBytes + " B]";
    }
}
