package io.fabricrpc.aggregation;

import io.fabricrpc.messaging.Messenger;
import io.fabricrpc.messaging.RecordWriter;

/**
 * TRADITIONAL mode: every call is framed at the chunk position it will occupy at the receiver
 * ({@link Messenger#frame}) and the batch is transmitted at once when it holds {@code batchBytes}, on {@link #flush()},
 * or by the agent once it has waited {@code maxDelay} at most. Zero-copy: under RDMA the calls go into the
 * messenger's registered staging memory and the batch is one WRITE from there; under shared memory large calls go
 * straight into the receiver's mapped chunk, unseen until the batch's first header is stored, small ones are copied
 * once per batch (the messenger's placement).
 *
 * <p>No lock and no clock per call. The sender frames; the agent transmits what a quiet sender left by claiming the
 * messenger's transmit position ({@link Messenger#transmitFromAnotherThread}), so the two never write the same state.
 * The agent tells a batch that waits from one that moves by the transmit position ({@link Messenger#pendingHint}): one
 * seen at the same position for {@code ticksToPushOut} ticks in a row has waited at least that many ticks, and less
 * than one more, so it goes out before {@code maxDelay} (a tick is {@value AggregationDuty#PERIOD_NANOS} ns; a
 * maxDelay under two ticks is rounded up to two).
 */
final class TraditionalAggregator extends Aggregator {
    private final int batchBytes;
    private final int ticksToPushOut;
    /** Agent thread only: the pending batch seen at its previous ticks, and for how many ticks since. */
    private long seenBatch = -1;
    private int ticksSeen;
    /** Sender thread only: the transmit position at this thread's latest mark, or -1. */
    private long markedBatch = -1;
    private final java.util.function.BooleanSupplier nothingWaits = () -> messenger.pendingHint() < 0;

    TraditionalAggregator(Messenger messenger, AggregationConfig config, AggregationDuty duty) {
        super(messenger, config, duty);
        this.batchBytes = config.batchBytes();
        this.ticksToPushOut = (int) Math.max(1, Math.min(Integer.MAX_VALUE,
                maxDelayNanos / AggregationDuty.PERIOD_NANOS - 1));
    }

    @Override
    public boolean send(int tag, RecordWriter writer) {
        if (!messenger.frame(tag, writer)) {
            return false;
        }
        // Judged after the frame: a position read before it could be a transmission the agent is still making, and
        // then the agent may stop watching before it sees this call (a batch left unsent for good).
        long start = messenger.transmitPosition();
        if (messenger.framedBytes(start) >= batchBytes) {
            batches++; // once per batch, not per call
            messenger.transmit();
            return true;
        }
        if (start != markedBatch) {
            markedBatch = start;
            markUnsent(); // once per transmit position this thread sees, after the frame's own stores
        }
        return true;
    }

    @Override
    boolean pushOutOverdue(long now) {
        long batch = messenger.pendingHint();
        if (batch < 0) {
            seenBatch = -1;
            return !stopWatching(nothingWaits);
        }
        if (batch != seenBatch) {
            seenBatch = batch; // transmitted since the last tick: what waits now is younger than a tick
            ticksSeen = 0;
        } else if (++ticksSeen >= ticksToPushOut) {
            pushOuts++;
            messenger.transmitFromAnotherThread();
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
        flushes++;
        messenger.flush();
    }

    /** The sender, waiting on this channel: its batch goes out now rather than after maxDelay. */
    @Override
    public void publishBuffered() {
        messenger.transmit();
    }

    /** Waits and rounds of processCalls do not push a batch out: that is what batches are for. */
    @Override
    public void publishDeferred() {
    }

    @Override
    boolean unpublishedSeenFromOutside() {
        return messenger.pendingHint() >= 0;
    }

    /** Transmits what the sender framed so far, by a claim (never racing the sender). */
    @Override
    public void flushFromAnotherThread() {
        messenger.transmitFromAnotherThread();
    }

    @Override
    public long bufferedBytes() {
        return messenger.bufferedBytes();
    }

    @Override
    public String toString() {
        return "TraditionalAggregator[" + messenger + ", batch " + batchBytes + " B]";
    }
}
