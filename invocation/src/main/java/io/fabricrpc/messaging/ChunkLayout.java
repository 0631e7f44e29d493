package io.fabricrpc.messaging;

import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * Layout of a messenger chunk: a buffer in the <em>receiver's</em> memory that one sender thread fills with
 * call records by one-sided writes (Seriema §4.4.1, sender-controlled buffer management).
 *
 * <pre>
 * Chunk (RemoteAccess.WRITE; allocated by the receiving process through a no-setup service call; zeroed):
 *  0                                    64                                              chunkSize
 *  +------------------------------------+---------------------------------+----------+----------+
 *  | (reserved)                         | record | record | ...           | seal     | zeros    |
 *  +------------------------------------+---------------------------------+----------+----------+
 *
 * Record (4-byte aligned; a call costs 4 bytes of framing plus up to 3 of padding):
 *  0        3        4                       4 + length          recordSize(length)
 *  +--------+--------+-----------------------+-------------------+
 *  | length | tag    | payload               | padding (0..3)    |
 *  +--------+--------+-----------------------+-------------------+
 *  header: little-endian int, length (> 0) in bits 0..23, tag in bits 24..31; tag bit 7 (TAG_NOTIFY) asks
 *  the receiver to push its consumed-record count once the record has been handled
 *
 * Seal (the sender has left the chunk; nothing more will be written to it):
 *  header with length 0 and tag = 1 + growth, where growth (0..254) is how many new chunks the sender inserted
 *  into its ring right after this chunk
 *
 * Notification slot (in the <em>sender's</em> memory, RemoteAccess.WRITE, 16 bytes per messenger):
 *  0                        8                        16
 *  +------------------------+------------------------+
 *  | consumed chunks        | consumed records       |
 *  +------------------------+------------------------+
 *  consumed chunks:  pushed by the receiver with Link.writeLong when (and only when) a chunk is finished
 *  consumed records: pushed after handling a record tagged TAG_NOTIFY (Seriema's consumed-side Synchronizer)
 *  Each word has a single writer (the destination thread), so plain monotonic writes need no atomics.
 * </pre>
 *
 * <p><b>Publication.</b> The header of a record is its flag: the receiver polls the header at its read position with
 * an acquiring load, and a zero header means "nothing yet". The sender writes a batch of records (one or many) with
 * {@link io.fabricrpc.transport.Link#writePublished}, which places the first header after every other byte of the
 * batch; headers further into the batch are covered by that first one. So one call costs the receiver one
 * cache line it must fetch, not two (record and a separate producer word), and RDMA needs no extra flag write per
 * batch beyond the 4-byte header. A chunk's data area always keeps 4 bytes for the seal after the last record.
 *
 * <p><b>Invariants.</b> Every byte of a chunk's data area beyond the last published header is zero: chunks start
 * zeroed, and the receiver zeroes what a sealed chunk held before it pushes the consumed-chunk count that lets the
 * sender write there again (the push is ordered after the zeroing). Sender and receiver walk symmetric circular
 * buffers of the same chunks in the same order. With S chunks sealed by the sender and C consumed by the receiver
 * (C ≤ S), the S − C sealed but unconsumed chunks are exactly the ones before the sender's current chunk, so the
 * chunk after the current one is free iff S − C + 1 < ring size. New chunks are inserted right after the current
 * one on both sides: the sender records their number in the seal of the chunk it leaves, and the receiver inserts
 * the same number (taken in allocation order) when it finishes that chunk.
 */
public final class ChunkLayout {
    public static final int DATA_OFFSET = 64;
    public static final int RECORD_HEADER_LENGTH = 4;
    public static final int RECORD_ALIGNMENT = 4;
    /** Bytes a chunk's data area keeps free after the last record for the seal. */
    public static final int SEAL_LENGTH = RECORD_HEADER_LENGTH;
    public static final int MAX_RECORD_LENGTH = (1 << 24) - 1;
    public static final int TAG_SHIFT = 24;
    public static final int LENGTH_MASK = MAX_RECORD_LENGTH;
    /** Tag bit asking the receiver to push its consumed-record count after handling the record. */
    public static final int TAG_NOTIFY = 0x80;
    /** Tags an application may use (bit 7 is the messenger's). */
    public static final int MAX_APPLICATION_TAG = 0x7F;
    public static final int NOTIFY_CHUNKS_OFFSET = 0;
    public static final int NOTIFY_RECORDS_OFFSET = 8;
    public static final int MIN_CHUNK_SIZE = 4096;

    /** Acquiring loads of the notification slot's words. */
    static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle();
    /** Acquiring loads of record headers (4-byte aligned). */
    static final VarHandle HEADER = ValueLayout.JAVA_INT.varHandle();

    private ChunkLayout() {
    }

    /** The seal header announcing {@code growth} (0..254) chunks inserted after this one. */
    static int sealHeader(int growth) {
        return (growth + 1) << TAG_SHIFT;
    }

    static boolean isSeal(int header) {
        return (header & LENGTH_MASK) == 0;
    }

    static int sealGrowth(int header) {
        return (header >>> TAG_SHIFT) - 1;
    }

    /** Bytes a record of {@code length} payload bytes occupies, header and padding included. */
    public static long recordSize(long length) {
        return (RECORD_HEADER_LENGTH + length + RECORD_ALIGNMENT - 1) & -RECORD_ALIGNMENT;
    }

    /** Bytes of a chunk's data area that records may fill (the seal keeps its 4 bytes). */
    public static int recordCapacity(int chunkSize) {
        return chunkSize - DATA_OFFSET - SEAL_LENGTH;
    }

    /** The largest payload one record can carry in a chunk of {@code chunkSize} bytes. */
    public static long maxPayload(int chunkSize) {
        return recordCapacity(chunkSize) - RECORD_HEADER_LENGTH;
    }
}
