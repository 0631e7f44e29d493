package io.fabricrpc.messaging;

import io.fabricrpc.transport.Link;
import io.fabricrpc.transport.LocalRegion;
import io.fabricrpc.transport.RemoteRegion;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The receiving half of one messenger (one sender thread to one destination thread): the circular buffer of
 * chunks the sender fills, walked in the same order as the sender's (see {@link ChunkLayout}). Polled only by
 * the destination thread; chunks for growth arrive from the service thread through a concurrent queue.
 */
final class SenderInbox {
    private final long sender;
    private final long destination;
    private final Link link;
    private final RemoteRegion notifyRegion;
    private final long notifyOffset;
    private final int dataCapacity;
    private final List<LocalRegion> ring = new ArrayList<>();
    /** Chunks allocated for growth, in allocation order; the service thread appends, this thread takes. */
    final ConcurrentLinkedQueue<LocalRegion> grown = new ConcurrentLinkedQueue<>();
    private int current;
    private long consumedBytes;
    private long consumedChunks;
    private long consumedRecords;
    private RuntimeException failure;

    SenderInbox(long sender, long destination, Link link, RemoteRegion notifyRegion, long notifyOffset,
                int chunkSize, List<LocalRegion> initialChunks) {
        this.sender = sender;
        this.destination = destination;
        this.link = link;
        this.notifyRegion = notifyRegion;
        this.notifyOffset = notifyOffset;
        this.dataCapacity = chunkSize - ChunkLayout.DATA_OFFSET;
        this.ring.addAll(initialChunks);
    }

    long sender() {
        return sender;
    }

    RuntimeException failure() {
        return failure;
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
        try {
            return consume(handler, limit, errors);
        } catch (CorruptChunkException e) {
            failure = e;
            errors.onError(sender, e);
            return 0;
        }
    }

    private int consume(RecordHandler handler, int limit, ReceivingThread.ErrorListener errors) {
        int records = 0;
        while (records < limit) {
            MemorySegment chunk = ring.get(current).segment();
            long word = (long) ChunkLayout.WORD.getAcquire(chunk, (long) ChunkLayout.PRODUCER_OFFSET); // pairs with the sender's ordered writeLong
            long published = ChunkLayout.published(word);
            if (published > dataCapacity || published < consumedBytes) {
                throw corrupt("producer word 0x" + Long.toHexString(word) + " publishes " + published
                        + " bytes (consumed " + consumedBytes + ", capacity " + dataCapacity + ")");
            }
            while (consumedBytes < published && records < limit) {
                long at = ChunkLayout.DATA_OFFSET + consumedBytes;
                int header = chunk.get(ValueLayout.JAVA_INT_UNALIGNED, at);
                int length = header & ChunkLayout.LENGTH_MASK;
                int tag = header >>> ChunkLayout.TAG_SHIFT;
                long size = ChunkLayout.recordSize(length);
                if (length == 0 || consumedBytes + size > published) {
                    throw corrupt("record length " + length + " at data offset " + consumedBytes + " (published "
                            + published + ")");
                }
                try {
                    handler.onRecord(sender, tag & ChunkLayout.MAX_APPLICATION_TAG, chunk,
                            at + ChunkLayout.RECORD_HEADER_LENGTH, length);
                } catch (RuntimeException e) {
                    errors.onError(sender, e); // one failing call does not stop the calls behind it
                }
                consumedBytes += size;
                consumedRecords++;
                records++;
                if ((tag & ChunkLayout.TAG_NOTIFY) != 0) {
                    // Single writer (this thread): the sender's Synchronizer loads it with acquire.
                    link.writeLong(notifyRegion, notifyOffset + ChunkLayout.NOTIFY_RECORDS_OFFSET, consumedRecords);
                }
            }
            if (consumedBytes < published || !ChunkLayout.sealed(word)) {
                return records;
            }
            finishChunk(chunk, ChunkLayout.growth(word));
        }
        return records;
    }

    /** The sender has left this chunk and everything in it is consumed: recycle it and tell the sender. */
    private void finishChunk(MemorySegment chunk, int growth) {
        ChunkLayout.WORD.setRelease(chunk, (long) ChunkLayout.PRODUCER_OFFSET, 0L); // reset before the sender can learn it is free
        consumedChunks++;
        link.writeLong(notifyRegion, notifyOffset + ChunkLayout.NOTIFY_CHUNKS_OFFSET, consumedChunks); // only when a chunk is finished (Seriema)
        for (int i = 1; i <= growth; i++) {
            LocalRegion added = grown.poll();
            if (added == null) {
                throw corrupt("sealed chunk announces " + growth + " new chunks but only " + (i - 1) + " were allocated");
            }
            ring.add(current + i, added);
        }
        current = current + 1 == ring.size() ? 0 : current + 1;
        consumedBytes = 0;
    }

    private CorruptChunkException corrupt(String detail) {
        return new CorruptChunkException("corrupt chunk " + current + " of " + ring.size() + " from sender thread "
                + Long.toHexString(sender) + " to thread " + Long.toHexString(destination) + ": " + detail
                + "; this sender's calls are no longer accepted");
    }

    void close() {
        ring.forEach(LocalRegion::close);
        grown.forEach(LocalRegion::close);
    }
}
