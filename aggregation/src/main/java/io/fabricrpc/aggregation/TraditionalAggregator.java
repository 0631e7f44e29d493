package io.fabricrpc.aggregation;

import io.fabricrpc.messaging.Messenger;
import io.fabricrpc.messaging.RecordWriter;

/**
 * TRADITIONAL mode: every call is serialized at the chunk position it will occupy at the receiver, and the batch is
 * published at once when it holds {@code batchBytes}, on {@link #flush()}, or {@code maxDelay} after its first call.
 * Zero-copy: under RDMA the calls go into the messenger's registered staging memory and the batch is one WRITE from
 * there; under shared memory large calls (see {@code Messenger.WINDOW_APPEND_MIN_RECORD}) go straight into the
 * receiver's mapped chunk, unseen until the batch's first header is stored with release, so publishing copies
 * nothing; small ones are batched in staging and copied once per batch, which measured faster.
 */
final class TraditionalAggregator extends Aggregator {
    private final int batchBytes;
    private long recordsAccepted;
    /** When the oldest unsent call of the current batch was made (written with the aggregator held). */
    private volatile long oldestUnsent;

    TraditionalAggregator(Messenger messenger, AggregationConfig config) {
        super(messenger, config);
        this.batchBytes = config.batchBytes();
    }

    @Override
    public boolean send(int tag, RecordWriter writer) {
        acquire();
        try {
            boolean first = messenger.stagedBytes() == 0;
            if (!messenger.append(tag, writer)) {
                return false;
            }
            recordsAccepted++;
            if (messenger.stagedBytes() >= batchBytes) {
                messenger.publish();
            } else if (first) {
                oldestUnsent = System.nanoTime(); // once per batch, not per call
                noteUnsent();
            }
            return true;
        } finally {
            release();
        }
    }

    @Override
    void flushIfDue(long now) {
        if (messenger.stagedBytes() > 0 && now - oldestUnsent >= maxDelayNanos) {
            messenger.publish();
        }
    }

    @Override
    boolean holdsUnsent() {
        return messenger.stagedBytes() > 0;
    }

    @Override
    public long recordsSent() {
        return messenger.recordsSent();
    }

    @Override
    public void flush() {
        acquire();
        try {
            messenger.flush();
        } finally {
            release();
        }
    }

    @Override
    public long bufferedBytes() {
        return messenger.stagedBytes();
    }

    long recordsAccepted() {
        return recordsAccepted;
    }

    @Override
    public String toString() {
        return "TraditionalAggregator[" + messenger + ", batch " + batchBytes + " B]";
    }
}
