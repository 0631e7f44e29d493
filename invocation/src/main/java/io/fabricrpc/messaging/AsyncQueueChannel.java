package io.fabricrpc.messaging;

import io.fabricrpc.api.FullPolicy;
import io.fabricrpc.api.MessagingException;
import io.fabricrpc.api.MessengerConfig;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.function.Consumer;

/**
 * {@link FullPolicy#RETRY_ASYNC} as a channel over a FAIL {@link Messenger}: a call the messenger refuses (every
 * chunk up to cMax full) is copied into a local queue, calls made while any wait queue behind it (per-sender FIFO),
 * and the queue drains into the messenger, oldest first, at the sender's next call, flush or wait, or from the
 * fabric's agent. Invariant: while {@code queued} is false the messenger and the queue are the sender's alone; while
 * it is true, whoever holds the {@link DrainClaim} (the sender, or the agent draining) has them. Only the sender sets
 * {@code queued}, holding the claim; the drain that empties the queue clears it as its last touch of the messenger.
 * Model: {@code model/waiting_calls_drain.pml}.
 */
public final class AsyncQueueChannel extends MessengerDecorator {
    private final MessagingNode node;
    private final long limit;
    private final DrainClaim claim = new DrainClaim();
    /** Names this channel in a claim wait that fails; made once, not per wait. */
    private final java.util.function.Supplier<String> name = this::toString;
    /** A flush's wait for room (holding the claim): spins, yields, then parks 1 to 100 us. */
    private final IdleStrategy roomWait = new BackoffIdleStrategy(64, 16, 1_000, 100_000);
    /** Calls wait in the queue: the sender claims from now on (volatile: the drain that empties it clears it). */
    private volatile boolean queued;

    // The claim holder's while queued; the sender's alone otherwise. Records framed as in a chunk (ChunkLayout).
    private MemorySegment queue = MemorySegment.NULL;
    private long head;
    private long tail;
    private long queuedRecords;
    /** tail - head, for the counters file: written by the claim holder (opaque), read by the counters' publisher. */
    private long queuedBytesGauge;
    private static final java.lang.invoke.VarHandle GAUGE;

    static {
        try {
            GAUGE = java.lang.invoke.MethodHandles.lookup().findVarHandle(AsyncQueueChannel.class, "queuedBytesGauge",
                    long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    // Sender thread only.
    private boolean queuedSeen;
    private Consumer<RecordChannel> directHolder = messenger -> { };

    AsyncQueueChannel(Messenger messenger, MessagingNode node, long limit) {
        super(messenger);
        this.node = node;
        this.limit = limit;
    }

    @Override
    public boolean send(int tag, RecordWriter writer) {
        if (!queued) {
            if (queuedSeen) {
                handDirect(false); // the agent drained the queue: the caller may use the messenger directly again
            }
            if (messenger.send(tag, writer)) {
                return true;
            }
        }
        return sendBehindQueue(tag, writer);
    }

    /** Holding the claim: drains waiting calls first, sends directly if room is left, else queues the call. */
    private boolean sendBehindQueue(int tag, RecordWriter writer) {
        checkPoisoned(); // a queued call would never run (before the claim: recordsSent takes it)
        claim.claim(name);
        try {
            if (!(queued && !drain()) && messenger.send(tag, writer)) {
                return true;
            }
            enqueue(tag, writer);
            return true;
        } finally {
            boolean waiting = queued; // read holding the claim: sees the agent's last drain
            if (waiting != queuedSeen) {
                handDirect(waiting);
            }
            claim.release();
        }
    }

    private void handDirect(boolean waiting) {
        queuedSeen = waiting;
        directHolder.accept(waiting ? null : messenger); // this thread's next call reads it
    }

    @Override
    public RecordChannel direct() {
        return queuedSeen ? null : messenger;
    }

    @Override
    public void bindDirect(Consumer<RecordChannel> holder) {
        directHolder = holder;
    }

    /** Claim held: copies one record behind the waiting ones; a clear error beyond the limit, never a drop. */
    private void enqueue(int tag, RecordWriter writer) {
        long maxRecord = messenger.maxPayload();
        ensureQueueCapacity(ChunkLayout.RECORD_HEADER_LENGTH + maxRecord);
        long length = writer.write(queue, tail + ChunkLayout.RECORD_HEADER_LENGTH, maxRecord);
        if (length <= 0) {
            throw length < 0 ? messenger.oversize() : new MessagingException("record writer reported 0 bytes");
        }
        long size = ChunkLayout.recordSize(length);
        if (tail - head + size > limit) {
            throw new MessagingException("asynchronous queue of " + messenger + " is full: " + (tail - head)
                    + " bytes in " + queuedRecords + " calls queued, limit " + limit
                    + " (MessengerConfig.asyncQueueLimitBytes); the call was not sent");
        }
        queue.set(ValueLayout.JAVA_INT_UNALIGNED, tail, ChunkLayout.header(length, tag));
        tail += size;
        queuedRecords++;
        GAUGE.setOpaque(this, tail - head);
        if (!queued) {
            queued = true; // volatile: the sender claims on every call until the queue drains
            node.flushLater(this);
        }
    }

    /** Claim held: moves queued records into the messenger, oldest first, while it has room. True once empty. */
    private boolean drain() {
        while (head < tail) {
            int header = queue.get(ValueLayout.JAVA_INT_UNALIGNED, head);
            long length = ChunkLayout.length(header);
            long from = head + ChunkLayout.RECORD_HEADER_LENGTH;
            boolean sent = messenger.send(ChunkLayout.tag(header), (target, offset, room) -> {
                if (length > room) {
                    return -1;
                }
                MemorySegment.copy(queue, from, target, offset, length);
                return length;
            });
            if (!sent) {
                return false;
            }
            head += ChunkLayout.recordSize(length);
            queuedRecords--;
            GAUGE.setOpaque(this, tail - head);
        }
        head = 0;
        tail = 0;
        queued = false; // release, and the last touch of the messenger: hands it back to the sender's direct path
        return true;
    }

    /**
     * The agent's look: drains what fits unless the sender holds the claim right now (it drains then itself).
     *
     * @return true while calls still wait
     */
    boolean drainFromAgent() {
        if (!queued) {
            return false;
        }
        if (!claim.tryClaim()) {
            return true;
        }
        try {
            return queued && !drain();
        } finally {
            claim.release();
        }
    }

    private void ensureQueueCapacity(long extra) {
        if (queue.byteSize() - tail >= extra) {
            return;
        }
        long live = tail - head;
        long needed = live + extra;
        // Native, as the chunks: calls are encoded into it, and a heap segment would make the shared capture writers'
        // profile polymorphic, slowing every call path.
        MemorySegment larger = queue.byteSize() >= needed && head > 0 ? queue
                : Arena.ofAuto().allocate(Math.max(needed, 2 * queue.byteSize()), Long.BYTES);
        MemorySegment.copy(queue, head, larger, 0, live);
        queue = larger;
        head = 0;
        tail = live;
    }

    /** Bytes of calls waiting in the queue as last stored (opaque): the counters file's gauge, any thread. */
    long loQueuedBytes() {
        return (long) GAUGE.getOpaque(this);
    }

    /** Bytes of calls waiting in the queue. */
    public long queuedBytes() {
        claim.claim(name);
        try {
            return tail - head;
        } finally {
            claim.release();
        }
    }

    @Override
    public long bufferedBytes() {
        if (!queued) {
            return messenger.bufferedBytes();
        }
        claim.claim(name);
        try {
            return tail - head + messenger.bufferedBytes();
        } finally {
            claim.release();
        }
    }

    /** Sends every queued call, waiting (bounded by the messenger's timeout and the peer's liveness) for room. */
    @Override
    public void flush() {
        if (queued) {
            claim.claim(name);
            try {
                long start = System.nanoTime();
                long timeout = messenger.timeout().toNanos();
                roomWait.reset();
                while (queued && !drain()) {
                    messenger.link().checkAlive();
                    if (System.nanoTime() - start > timeout) {
                        throw new MessagingException("flush of " + messenger + ": " + (tail - head) + " bytes in "
                                + queuedRecords + " calls still queued after " + timeout / 1_000_000 + " ms");
                    }
                    messenger.helpWhileWaiting();
                    roomWait.idle(); // the receiver sets the pace: spin, yield, then park as a RETRY wait does
                }
            } finally {
                claim.release();
            }
        }
        messenger.flush();
    }

    @Override
    public void publishBuffered() {
        if (!queued) {
            messenger.publishBuffered();
            return;
        }
        claim.claim(name);
        try {
            drain();
            messenger.publishBuffered();
        } finally {
            claim.release();
        }
    }

    @Override
    public void flushFromAnotherThread() {
        messenger.publishDeferred();
        drainFromAgent();
    }

    /**
     * Calls accepted, sent or queued: the sequence number of the latest one. Sender thread. Counted from the messenger
     * and the queue, not by this channel's sends: the runtime also sends through {@link #direct()}.
     */
    @Override
    public long recordsSent() {
        if (!queued) {
            return messenger.recordsSent();
        }
        claim.claim(name); // the agent moves records from the queue into the messenger meanwhile
        try {
            return messenger.recordsSent() + queuedRecords;
        } finally {
            claim.release();
        }
    }

    @Override
    public void close() {
        node.unflushLater(this);
        messenger.close();
    }

    @Override
    public String toString() {
        return "AsyncQueueChannel[" + messenger + ", queued " + (tail - head) + " B]";
    }
}
