package io.fabricrpc.messaging;

import io.fabricrpc.transport.Link;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Transmits into the receiver's mapped chunk (shared memory): storing a batch's held first header with release, or,
 * for a batch framed in staging (small records, copied once per batch), copying it and then storing its first header
 * with release. Never defers a flag.
 *
 * <p>Invariant: a batch is homogeneous (the owner picks staging or window only at a batch's start, when nothing is
 * pending), and in the window only the first header of a batch is held; the others are stored as framed. So storing
 * the held header, if it belongs to the claimed range's start, publishes the whole range.
 */
final class WindowPublisher extends Publisher {
    WindowPublisher(Link link, RecordAppender appender) {
        super(link, appender);
    }

    @Override
    long transmitClaimed(long claimed, long appendedWord, boolean defer, boolean owner) {
        long gen = RecordAppender.gen(claimed);
        long start = RecordAppender.offset(claimed);
        long end = RecordAppender.offset(appendedWord);
        if (start >= end) {
            return claimed;
        }
        MemorySegment window = appender.window; // this generation's, as the claim was made in it
        long from = ChunkLayout.DATA_OFFSET + start;
        if ((appendedWord & RecordAppender.IN_STAGING) != 0) {
            MemorySegment staging = appender.stagingSegment();
            MemorySegment.copy(staging, from + ChunkLayout.RECORD_HEADER_LENGTH, window,
                    from + ChunkLayout.RECORD_HEADER_LENGTH, end - start - ChunkLayout.RECORD_HEADER_LENGTH);
            // Release: the copied records (their headers included) are visible before the first header.
            ChunkLayout.HEADER.setRelease(window, from, staging.get(ValueLayout.JAVA_INT_UNALIGNED, from));
        } else {
            // A zero header at the range's start was held (a stored one is never zero), and `held` is still its: the
            // owner holds again only at a batch start, which this claim has not passed yet.
            long held = appender.lvHeld();
            if ((int) ChunkLayout.HEADER.getAcquire(window, from) == 0) {
                if (held >>> 32 != from) {
                    throw new IllegalStateException("held header " + Long.toHexString(held) + " is not the one at "
                            + from + " (transmit " + Long.toHexString(claimed) + ")");
                }
                ChunkLayout.HEADER.setRelease(window, from, (int) held); // release: after the batch's bytes
            } // else every header of the range is out already
        }
        return word(gen, end, false);
    }
}
