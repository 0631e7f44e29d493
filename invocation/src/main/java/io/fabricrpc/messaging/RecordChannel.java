package io.fabricrpc.messaging;

import io.fabricrpc.transport.Link;

/**
 * A one-way channel of records from one sender thread to one destination thread: a messenger, or a layer (an
 * aggregator, an asynchronous queue) built on one. Records sent on a channel are handled in the order sent. Used by one sender thread
 * (implementations say what else may touch them).
 */
public interface RecordChannel extends AutoCloseable {
    /**
     * Sends (or buffers) one record with tag 0..{@link ChunkLayout#MAX_APPLICATION_TAG}, optionally ORed with
     * {@link ChunkLayout#TAG_NOTIFY}.
     *
     * @return false if the record was refused (the channel's full policy), true if it was sent or buffered
     */
    boolean send(int tag, RecordWriter writer);

    /** {@link #send(int, RecordWriter)} with tag 0. */
    default boolean send(RecordWriter writer) {
        return send(0, writer);
    }

    /**
     * The channel a record may be sent through directly right now, with the same effect {@link #send} would have, or
     * null: lets callers keep one inlined call site for every kind of channel (the messenger underneath, typically).
     * A record the direct channel refuses must then be offered to {@link #send} (unless the channel is its own
     * direct one). Sending thread only.
     */
    default RecordChannel direct() {
        return null;
    }

    /**
     * Where the caller keeps this channel's {@link #direct()}, so that its hot path reads a field of its own instead
     * of asking the channel. A channel whose answer can change hands it to {@code holder}, on the sending thread,
     * before the change takes effect; the caller reads {@link #direct()} once when it binds. Sending thread only.
     */
    default void bindDirect(java.util.function.Consumer<RecordChannel> holder) {
    }

    /** Records accepted so far: the sequence number of the latest one. */
    long recordsSent();

    /** Records the receiver has handled, as of its latest push (pushed after TAG_NOTIFY records). */
    long consumedRecords();

    /**
     * Throws {@link ChannelPoisonedException} if the receiver dropped this channel (it tells the sender through the
     * channel's notification slot); cheap, a local load. Sending thread.
     */
    default void checkPoisoned() {
    }

    /** Records tagged TAG_NOTIFY whose handler threw at the receiver, as of its latest push (before their consumption). */
    default long failedRecords() {
        return 0;
    }

    /** The receiver's text of the latest failure {@link #failedRecords()} counts: the class name, a newline, the message. */
    default String latestFailure() {
        return "";
    }

    /** Completion ticket of the latest write issued on {@link #link()}. */
    long lastTicket();

    Link link();

    /** The destination thread's id. */
    long destination();

    /** Sends everything buffered, waiting (bounded) for room if needed. The sending thread's call. */
    void flush();

    /**
     * What a thread other than the sending one may flush without racing it: the channel's deferred flag, and whatever
     * the channel guards with a lock of its own. Never waits for room.
     */
    default void flushFromAnotherThread() {
        publishDeferred();
    }

    /**
     * Sends the flag of records written but left unpublished for the next call to carry (deferred publication,
     * held calls), if any. Cheap when there is none; any thread. Waits and idle loops call it.
     */
    default void publishDeferred() {
    }

    /**
     * The sending thread's push while it waits on this channel (a Synchronizer, a result): writes out what the channel
     * buffers and can write now (a batch, a waiting flag, exceeding calls that fit), never waiting for room.
     */
    default void publishBuffered() {
        publishDeferred();
    }

    /** Bytes accepted but not yet written to the destination (records whose flag waits included). */
    long bufferedBytes();

    @Override
    void close();

    /** Counters of this channel's own layer (an aggregator's batches), beyond its messenger's; null if none. */
    default io.fabricrpc.counters.CounterSource counters() {
        return null;
    }
}
