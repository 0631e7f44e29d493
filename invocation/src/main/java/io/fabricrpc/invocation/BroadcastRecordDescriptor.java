package io.fabricrpc.invocation;

import io.fabricrpc.api.RemoteRegion;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Layout of a BROADCAST invocation record (little-endian, unaligned). Every hop forwards it unchanged but for the
 * span, which the sender patches per child. Optional sections follow the header in this order, as the flags say.
 * <pre>
 *   0          4          8          12                     20
 *   | root (4) | span (4) | flags (4) | sequence (8)        | [ACK: ack region (40)]
 *   [READ: source region (40) | offset (8) | length (8)]
 *   [WRITTEN: offset (8) | length (8) | region id of rank 0 (8) ... of rank P-1 (8)]
 *   | self-contained call record (definition included) | [INLINE: buffer bytes] |
 * </pre>
 */
final class BroadcastRecordDescriptor {
    static final int ROOT_OFFSET = 0;
    static final int SPAN_OFFSET = 4;
    static final int FLAGS_OFFSET = 8;
    static final int SEQUENCE_OFFSET = 12;
    static final int HEADER_LENGTH = 20;

    /** The root wants every worker to acknowledge the run in its ack region (an ACK section follows). */
    static final int FLAG_ACK = 1;
    /** The argument buffer follows the call record. */
    static final int FLAG_INLINE = 2;
    /** Every worker reads the argument one-sided from the root's region (a READ section follows). */
    static final int FLAG_READ = 4;
    /** The root wrote the argument into one region per rank (a WRITTEN section follows). */
    static final int FLAG_WRITTEN = 8;

    static final int ACK_SECTION_LENGTH = RemoteRegion.ENCODED_LENGTH;

    static final int READ_REGION_OFFSET = 0;
    static final int READ_OFFSET_OFFSET = RemoteRegion.ENCODED_LENGTH;
    static final int READ_LENGTH_OFFSET = READ_OFFSET_OFFSET + 8;
    static final int READ_SECTION_LENGTH = READ_LENGTH_OFFSET + 8;

    static final int WRITTEN_OFFSET_OFFSET = 0;
    static final int WRITTEN_LENGTH_OFFSET = 8;
    static final int WRITTEN_REGION_IDS_OFFSET = 16;

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;

    private BroadcastRecordDescriptor() {
    }

    static long writtenSectionLength(int ranks) {
        return WRITTEN_REGION_IDS_OFFSET + 8L * ranks;
    }

    /** Writes the header but the span, which {@link #writeSpan} sets per child. */
    static void writeHeader(MemorySegment record, int root, int flags, long sequence) {
        record.set(INT, ROOT_OFFSET, root);
        record.set(INT, FLAGS_OFFSET, flags);
        record.set(LONG, SEQUENCE_OFFSET, sequence);
    }

    static void writeSpan(MemorySegment record, long recordOffset, int span) {
        record.set(INT, recordOffset + SPAN_OFFSET, span);
    }

    /** Writes the ACK section at {@code at}; returns where the next section starts. */
    static long writeAck(MemorySegment record, long at, RemoteRegion acks) {
        acks.encode(record, at);
        return at + ACK_SECTION_LENGTH;
    }

    /** Writes the READ section at {@code at}; returns where the next section starts. */
    static long writeRead(MemorySegment record, long at, RemoteRegion source, long offset, long length) {
        source.encode(record, at + READ_REGION_OFFSET);
        record.set(LONG, at + READ_OFFSET_OFFSET, offset);
        record.set(LONG, at + READ_LENGTH_OFFSET, length);
        return at + READ_SECTION_LENGTH;
    }

    /** Writes the WRITTEN section at {@code at}, one region id per rank; returns where the next section starts. */
    static long writeWritten(MemorySegment record, long at, long offset, long length, long[] regionIds) {
        record.set(LONG, at + WRITTEN_OFFSET_OFFSET, offset);
        record.set(LONG, at + WRITTEN_LENGTH_OFFSET, length);
        for (int r = 0; r < regionIds.length; r++) {
            record.set(LONG, at + WRITTEN_REGION_IDS_OFFSET + 8L * r, regionIds[r]);
        }
        return at + writtenSectionLength(regionIds.length);
    }
}
