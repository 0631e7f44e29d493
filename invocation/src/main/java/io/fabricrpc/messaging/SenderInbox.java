package io.fabricrpc.messaging;

import io.fabricrpc.api.MessagingException;

import io.fabricrpc.transport.CounterSlot;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The receiving half of one messenger (one sender thread to one destination thread): the circular buffer of
 * chunks the sender fills, walked in the same order as the sender's (see {@link ChunkLayout}). Polled only by
 * the destination thread; chunks for growth arrive from the service thread through a concurrent queue.
 *
 * <p>Invariant: the inbox either advances whole (records run, chunk zeroed, count pushed, ring moved) or is
 * poisoned: {@code failure} is set, reported once, the sender told through its poison word ({@link ChannelNotices}),
 * and nothing is consumed again. A corrupt record, a rejected record, a sequence gap and a failed push all poison.
 */
final class SenderInbox {
    private final long sender;
    private final long destination;
    private final CounterSlot.Writer consumedChunksPush;
    private final CounterSlot.Writer consumedRecordsPush;
    private final ChannelNotices notices;
    /** Records consumed before the current chunk: its sequence words must name this and the count since. */
    private long recordsBeforeChunk;
    /** Notifying records whose handler threw (pushed with their text before their consumed count). */
    private long failedNotifying;
    private final int recordCapacity;
    /** The chunk size every grant for this inbox has; set at creation. */
    final int chunkSize;
    /** Service thread only: chunks granted so far (initial and growth), bounded per inbox. */
    int grantedChunks;
    private final List<LocalRegion> ring = new ArrayList<>();
    /** Chunks allocated for growth, in allocation order; the service thread appends, this thread takes. */
    final ConcurrentLinkedQueue<LocalRegion> grown = new ConcurrentLinkedQueue<>();
    private int current;
    private long consumedBytes;
    /** Records before this data offset are complete by ChunkLayout's rule 2 (a later write has landed after them). */
    private long provenBytes;
    /** The unfinished walk of {@link #provenByALaterWrite}: the read position it started at and where it stopped. */
    private long walkFrom = -1;
    private long walkAt;
    private long consumedChunks;
    long consumedRecords; // also the counters' "calls run": InboxCounters reads it opaque
    private RuntimeException failure;
    /** Set once, by CAS (fencing, on the control plane's verdict): records from here on are not run. */
    private volatile String fenced;
    private static final java.lang.invoke.VarHandle FENCED;

    static {
        try {
            FENCED = java.lang.invoke.MethodHandles.lookup().findVarHandle(SenderInbox.class, "fenced", String.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    SenderInbox(long sender, long destination, Link link, RemoteRegion notifyRegion, long notifyOffset,
                int chunkSize, List<LocalRegion> initialChunks) {
        this.sender = sender;
        this.destination = destination;
        this.consumedChunksPush = new CounterSlot.Writer(link, notifyRegion, notifyOffset + ChunkLayout.NOTIFY_CHUNKS_OFFSET);
        this.consumedRecordsPush = new CounterSlot.Writer(link, notifyRegion,
                notifyOffset + ChunkLayout.NOTIFY_RECORDS_OFFSET);
        this.notices = new ChannelNotices(link, notifyRegion, notifyOffset);
        this.recordCapacity = ChunkLayout.recordCapacity(chunkSize);
        this.chunkSize = chunkSize;
        this.grantedChunks = initialChunks.size();
        this.ring.addAll(initialChunks);
    }

    /** Records of this sender consumed so far (every one, run or failed); read by the polling thread. */
    long consumedRecords() {
        return consumedRecords;
    }

    long sender() {
        return sender;
    }

    RuntimeException failure() {
        return failure;
    }

    /** The job declared this sender's process failed: stop running its calls (any thread; the first reason stays). */
    void fence(String reason) {
        FENCED.compareAndSet(this, null, reason);
    }

    int chunkCount() {
        return ring.size();
    }

    /**
     * Consumes up to {@code limit} records. A corrupt chunk poisons this inbox only: the failure is returned
     * once (and kept), and other senders' inboxes go on being served.
     */
    int poll(RecordHandler handler, int limit, ReceivingThread.ErrorListener errors) {
        if (failure != null) {
            return 0;
        }
        String fence = fenced;
        if (fence != null) {
            failure = new io.fabricrpc.api.PeerFailedException("thread " + ThreadNames.of(sender),
                    "fenced: " + fence + "; its calls are no longer run");
            errors.onError(sender, failure);
            return 0;
        }
        try {
            return consume(handler, limit, errors);
        } catch (CorruptChunkException e) {
            poison(e.reason(), e, errors);
            return 0;
        } catch (InternalError fault) { // HotSpot's SIGBUS: this sender's chunk lost its memory, not the worker
            poison(PoisonReason.MEMORY_FAULT, new MessagingException("reading chunk " + current + " of sender thread "
                    + ThreadNames.of(sender) + " faulted (its file was truncated or removed?): " + fault.getMessage(),
                    fault), errors);
            return 0;
        }
    }

    /**
     * Drops this sender's channel: reported once here, and written to the sender's poison word with the count of
     * records consumed before this point. If even that write fails, the link is failing and the sender learns it so.
     */
    private void poison(PoisonReason reason, RuntimeException cause, ReceivingThread.ErrorListener errors) {
        failure = cause;
        try {
            notices.poison(reason, consumedRecords, cause instanceof CorruptChunkException c ? c.detail()
                    : cause.getMessage() == null ? cause.getClass().getName() : cause.getMessage());
        } catch (RuntimeException e) {
            cause.addSuppressed(e);
        }
        errors.onError(sender, cause);
    }

    /** A push to the sender failed: the inbox cannot advance as the sender sees it, so it is poisoned instead. */
    private void pushFailed(String what, RuntimeException e, ReceivingThread.ErrorListener errors) {
        poison(PoisonReason.PUSH_FAILED, new MessagingException("thread " + ThreadNames.of(destination)
                + " could not push its " + what + " to sender thread " + ThreadNames.of(sender) + " (" + e
                + "); this sender's calls are no longer accepted", e), errors);
    }

    private int consume(RecordHandler handler, int limit, ReceivingThread.ErrorListener errors) {
        int records = 0;
        MemorySegment chunk = ring.get(current).segment();
        while (records < limit) {
            long at = ChunkLayout.DATA_OFFSET + consumedBytes;
            int header = (int) ChunkLayout.HEADER.getAcquire(chunk, at); // pairs with the sender's writePublished
            if (!ChunkLayout.isPublished(header) && consumedBytes >= provenBytes) {
                if (!provenByALaterWrite(chunk, header)) {
                    return records; // nothing published here yet (its length bytes may be, the control byte lands last)
                }
                header = (int) ChunkLayout.HEADER.getAcquire(chunk, at); // read before the proof: may have been torn
            }
            if (!ChunkLayout.isPlaced(header)) {
                throw corrupt("published record header 0x" + Integer.toHexString(header) + " at data offset "
                        + consumedBytes + " lacks the length marks");
            }
            if (ChunkLayout.isSeal(header)) {
                if (!finishChunk(chunk, ChunkLayout.sealGrowth(header), errors)) {
                    return records;
                }
                chunk = ring.get(current).segment();
                continue;
            }
            int length = ChunkLayout.length(header);
            int tag = ChunkLayout.tag(header);
            if (length == 0) {
                throw corrupt("record header 0x" + Integer.toHexString(header) + " at data offset " + consumedBytes
                        + " has length 0");
            }
            long size = ChunkLayout.recordSize(length);
            if (consumedBytes + size > recordCapacity) {
                throw corrupt("record header 0x" + Integer.toHexString(header) + " at data offset " + consumedBytes
                        + " claims " + length + " bytes, beyond the chunk's " + recordCapacity);
            }
            Throwable thrown = null;
            try {
                handler.onRecord(sender, tag & ~ChunkLayout.TAG_NOTIFY, chunk,
                        at + ChunkLayout.RECORD_HEADER_LENGTH, length);
            } catch (RecordRejectedException e) {
                poison(e.reason(), e, errors); // the record and everything behind it are not run
                return records;
            } catch (Throwable e) {
                // One failing call (a StackOverflowError included) does not stop the calls behind it, nor this thread.
                errors.onError(sender, e);
                thrown = e;
            }
            consumedBytes += size;
            consumedRecords++;
            records++;
            if ((tag & ChunkLayout.TAG_NOTIFY) != 0 && !notifyConsumed(thrown, errors)) {
                return records; // the push failed: poisoned
            }
        }
        return records;
    }

    /**
     * After a notifying record: a failure's text and count first, then the consumed count, each ordered after the
     * handler's writes (link order). False if a push failed (the inbox is poisoned then).
     */
    private boolean notifyConsumed(Throwable thrown, ReceivingThread.ErrorListener errors) {
        try {
            if (thrown != null) {
                notices.failed(++failedNotifying, thrown.getClass().getName()
                        + (thrown.getMessage() == null ? "" : "\n" + thrown.getMessage()));
            }
            consumedRecordsPush.publish(consumedRecords);
            return true;
        } catch (RuntimeException e) {
            pushFailed("consumed-record count " + consumedRecords, e, errors);
            return false;
        }
    }

    /**
     * ChunkLayout's rule 2: the records from the read position on, sent with their flag cleared, are complete once a
     * record marked FOLLOWS comes after them, every record between being wholly placed with its flag (written
     * together with the first, or published by a write of its own). The walk resumes where the previous look
     * stopped; on success the records up to the FOLLOWS are proven. Anything it cannot decide (a header still
     * landing, possibly a seal) is "not yet": a published header gets the corruption checks when it is read.
     */
    private boolean provenByALaterWrite(MemorySegment chunk, int header) {
        long offset = consumedBytes;
        if (walkFrom == consumedBytes && walkAt > consumedBytes) {
            offset = walkAt; // a wholly placed header reached on an earlier look
            header = (int) ChunkLayout.HEADER.getAcquire(chunk, ChunkLayout.DATA_OFFSET + offset);
        }
        walkFrom = consumedBytes;
        while (ChunkLayout.isPlaced(header)) {
            int length = ChunkLayout.length(header);
            long next = offset + ChunkLayout.recordSize(length);
            if (length == 0 || next > recordCapacity) {
                break; // a seal whose control byte has not landed, or a corrupt header
            }
            int following = (int) ChunkLayout.HEADER.getAcquire(chunk, ChunkLayout.DATA_OFFSET + next);
            if (ChunkLayout.follows(following)) {
                provenBytes = next; // a write posted after every record before it has landed
                walkFrom = -1;
                return true;
            }
            if (!ChunkLayout.isPublished(following) || ChunkLayout.isSeal(following)) {
                break;
            }
            walkAt = offset = next;
            header = following;
        }
        if (offset == consumedBytes) {
            walkFrom = -1;
        }
        return false;
    }

    /**
     * The sender has sealed this chunk and everything in it is consumed: checks its sequence, recycles it and tells
     * the sender. False if the push failed: the inbox is then poisoned, not half-advanced.
     */
    private boolean finishChunk(MemorySegment chunk, int growth, ReceivingThread.ErrorListener errors) {
        if (growth > grown.size()) {
            throw corrupt(PoisonReason.BAD_SEAL, "seal announces " + growth + " new chunks but only " + grown.size()
                    + " were allocated");
        }
        // Plain loads: the sender wrote these before the seal, which was read with acquire (or proven, ChunkLayout).
        long first = chunk.get(ValueLayout.JAVA_LONG_UNALIGNED, ChunkLayout.SEQUENCE_FIRST_OFFSET);
        long count = chunk.get(ValueLayout.JAVA_LONG_UNALIGNED, ChunkLayout.SEQUENCE_COUNT_OFFSET);
        if (first != recordsBeforeChunk || count != consumedRecords - recordsBeforeChunk) {
            throw corrupt(PoisonReason.SEQUENCE_GAP, "the sender numbers this chunk's records " + first + " + " + count
                    + " but " + (consumedRecords - recordsBeforeChunk) + " records were found after record "
                    + recordsBeforeChunk);
        }
        // Zero what the sender wrote (sequence, records and seal), so that a zero header means "not yet" next pass.
        chunk.asSlice(0, ChunkLayout.SEQUENCE_LENGTH).fill((byte) 0);
        chunk.asSlice(ChunkLayout.DATA_OFFSET, consumedBytes + ChunkLayout.SEAL_LENGTH).fill((byte) 0);
        try {
            // Ordered after the zeroing (the transport's writes are releases): only now may the sender write here again.
            consumedChunksPush.publish(consumedChunks + 1); // only when a chunk is finished (Seriema)
        } catch (RuntimeException e) {
            pushFailed("consumed-chunk count " + (consumedChunks + 1), e, errors);
            return false;
        }
        consumedChunks++;
        recordsBeforeChunk = consumedRecords;
        for (int i = 1; i <= growth; i++) {
            ring.add(current + i, grown.poll());
        }
        current = current + 1 == ring.size() ? 0 : current + 1;
        consumedBytes = 0;
        provenBytes = 0;
        walkFrom = -1;
        return true;
    }

    private CorruptChunkException corrupt(String detail) {
        return corrupt(PoisonReason.CORRUPT_RECORD, detail);
    }

    private CorruptChunkException corrupt(PoisonReason reason, String detail) {
        return new CorruptChunkException(reason, "corrupt chunk " + current + " of " + ring.size() + " from sender thread "
                + ThreadNames.of(sender) + " to thread " + ThreadNames.of(destination) + ": " + detail
                + "; this sender's calls are no longer accepted", detail);
    }

    void close() {
        ring.forEach(LocalRegion::close);
        grown.forEach(LocalRegion::close);
    }
}
