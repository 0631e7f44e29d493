package io.fabricrpc.messaging;

import io.fabricrpc.api.FullPolicy;

import io.fabricrpc.counters.CounterSource;
import io.fabricrpc.counters.CounterTypes;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.function.LongSupplier;

/**
 * A messenger's counters, read on the counters publisher's thread from the sender's own fields: calls sent (the
 * messenger's record count), bytes sent (its transmit position plus the bytes of earlier chunks), chunks held (c_max
 * in the label), ring-full events, RETRY waits, and RETRY_ASYNC queued bytes once a queue binds its gauge.
 *
 * <p>Invariant: nothing here is written on the sending path; the sender's counts are read with opaque or acquire
 * loads. The async-queue gauge is the one hook a RETRY_ASYNC channel binds ({@link #bindAsyncQueueBytes}).
 */
public final class ChannelCounters implements CounterSource {
    private static final VarHandle RECORDS_SENT;
    private static final VarHandle RING_FULL;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            RECORDS_SENT = lookup.findVarHandle(Messenger.class, "recordsSent", long.class);
            RING_FULL = lookup.findVarHandle(Messenger.class, "ringFullEvents", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final int CALLS = 0;
    private static final int BYTES = 1;
    private static final int CHUNKS = 2;
    private static final int FULL = 3;
    private static final int WAITS = 4;
    private static final int ASYNC = 5;

    private final Messenger messenger;
    private final String name;
    /** Any thread: RETRY_ASYNC queued bytes, by the queue's own opaque or volatile load; null until bound. */
    private volatile LongSupplier asyncQueueBytes;
    /** Publisher thread: the last sound reading of bytes sent. */
    private long lastBytes;

    ChannelCounters(Messenger messenger) {
        this.messenger = messenger;
        this.name = CounterTypes.channel(messenger.sender(), messenger.destination());
    }

    /**
     * Hook for RETRY_ASYNC: binds the queue's depth in bytes (read on the publisher's thread, so an opaque or volatile
     * load of a field the queue's owner writes). Until bound the counter reads 0.
     */
    public void bindAsyncQueueBytes(LongSupplier loQueuedBytes) {
        this.asyncQueueBytes = loQueuedBytes;
    }

    @Override
    public int counterCount() {
        return messenger.fullPolicy() == FullPolicy.FAIL ? 6 : 5; // a FAIL messenger may sit under a RETRY_ASYNC queue
    }

    @Override
    public String label(int index) {
        return switch (index) {
            case CALLS -> "calls sent " + name;
            case BYTES -> "bytes sent " + name;
            case CHUNKS -> "chunks held (c_max " + messenger.config.cMax() + ") " + name;
            case FULL -> "ring full " + name;
            case WAITS -> "RETRY waits " + name;
            default -> "RETRY_ASYNC queued bytes " + name;
        };
    }

    @Override
    public int typeId(int index) {
        return switch (index) {
            case CALLS -> CounterTypes.CALLS_SENT;
            case BYTES -> CounterTypes.BYTES_SENT;
            case CHUNKS -> CounterTypes.CHUNKS_HELD;
            case FULL -> CounterTypes.RING_FULL;
            case WAITS -> CounterTypes.RETRY_WAITS;
            default -> CounterTypes.ASYNC_QUEUE_BYTES;
        };
    }

    @Override
    public long loValue(int index) {
        return switch (index) {
            case CALLS -> (long) RECORDS_SENT.getOpaque(messenger);
            case BYTES -> lvBytesSent();
            case CHUNKS -> messenger.ring.lvChunkCount();
            case FULL -> (long) RING_FULL.getOpaque(messenger);
            case WAITS -> messenger.ring.loRetryWaits();
            default -> {
                LongSupplier gauge = asyncQueueBytes;
                yield gauge == null ? 0 : gauge.getAsLong();
            }
        };
    }

    /** The transmit word, then the bytes of earlier generations, then the word again: sound if it names one generation. */
    private long lvBytesSent() {
        RecordAppender appender = messenger;
        long t = appender.lvTransmit();
        long before = messenger.ring.lvBytesBefore(RecordAppender.gen(t));
        long again = appender.lvTransmit();
        if (RecordAppender.gen(again) == RecordAppender.gen(t)) {
            lastBytes = before + RecordAppender.offset(again);
        }
        return lastBytes; // the generation moved while read: the previous reading, the next look catches up
    }

    @Override
    public boolean isClosed() {
        return messenger.closed;
    }
}
