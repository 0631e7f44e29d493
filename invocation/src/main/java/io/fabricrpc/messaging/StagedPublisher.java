package io.fabricrpc.messaging;

import io.fabricrpc.transport.Link;
import io.fabricrpc.api.RemoteRegion;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Transmits from staging with link WRITEs (RDMA): a range goes out with {@link Link#writePublished} (its first
 * control byte placed last), or deferred ({@link Link#writeFirstByteAs} with VALID cleared, FLAG set in the transmit
 * position) so that the next claimed WRITE publishes it by FOLLOWS on its first record (ChunkLayout, rule 2).
 *
 * <p>Invariant: FOLLOWS is set only by the owner, on the first record of its claimed range, when the claim found FLAG:
 * the WRITE carrying the flagged record was posted by an earlier claim, and claims post in claim order. Another
 * claimant sends a waiting flag as its own 1-byte WRITE first. {@code flagAt} is written by the owner only, under a
 * claim that sets FLAG, and read by a claimant only after it claimed a position with FLAG.
 */
final class StagedPublisher extends Publisher {
    private final MemorySegment staging;
    /** Chunk offset of the record whose VALID waits (meaningful while FLAG is set). */
    private long flagAt;

    StagedPublisher(Link link, RecordAppender appender) {
        super(link, appender);
        this.staging = appender.stagingSegment();
    }

    @Override
    long transmitClaimed(long claimed, long appendedWord, boolean defer, boolean owner) {
        long gen = RecordAppender.gen(claimed);
        long from = ChunkLayout.DATA_OFFSET + RecordAppender.offset(claimed);
        // A claimant other than the owner read `appended` first: it may be older than the position it claimed, which
        // never moves back (model: transmit-staged-stale-a-off-NEG).
        long end = Math.max(RecordAppender.offset(claimed), RecordAppender.offset(appendedWord));
        long to = ChunkLayout.DATA_OFFSET + end;
        boolean flag = (claimed & FLAG) != 0;
        RemoteRegion chunk = appender.chunk; // this generation's: the owner moves on only after its own seal claim
        if (from < to) {
            if (flag && owner) {
                // This WRITE is posted after the one carrying the flagged record: FOLLOWS publishes it.
                staging.set(ValueLayout.JAVA_BYTE, from, (byte) (staging.get(ValueLayout.JAVA_BYTE, from) | ChunkLayout.FOLLOWS));
            } else if (flag) {
                posted(link.write(appender.staging, flagAt, chunk, flagAt, 1), false);
            }
            if (defer) {
                byte first = (byte) (staging.get(ValueLayout.JAVA_BYTE, from) & ~ChunkLayout.VALID);
                posted(link.writeFirstByteAs(appender.staging, from, chunk, from, to - from, first), owner);
                flagAt = from;
                return word(gen, end, true);
            }
            // The transport places the first header after the other bytes; the receiver loads it with acquire.
            posted(link.writePublished(appender.staging, from, chunk, from, to - from), owner);
            return word(gen, end, false);
        }
        if (flag && !defer) {
            // Idempotent with a FOLLOWS that may already stand for it: the same staged byte, later than its record.
            posted(link.write(appender.staging, flagAt, chunk, flagAt, 1), owner);
            return word(gen, end, false);
        }
        return claimed;
    }

    @Override
    long pendingBytes() {
        long v = lvTransmit();
        long pending = super.pendingBytes();
        return (v & FLAG) != 0 ? pending + (ChunkLayout.DATA_OFFSET + RecordAppender.offset(v) - flagAt) : pending;
    }
}
