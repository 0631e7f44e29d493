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
 *  0         1                   4                       4 + length          recordSize(length)
 *  +---------+-------------------+-----------------------+-------------------+
 *  | control | length (24 bits)  | payload               | padding (0..3)    |
 *  +---------+-------------------+-----------------------+-------------------+
 *  header: little-endian int; control byte = VALID (0x80, set in every published header) | TAG_NOTIFY (0x40, asks
 *  the receiver to push its consumed-record count once the record has been handled) | tag (0..62); length > 0
 *
 * Seal (the sender has left the chunk; nothing more will be written to it):
 *  control = VALID | SEAL_TAG (63), and the length field holds the growth (0..255): how many new chunks the sender
 *  inserted into its ring right after this chunk
 *
 * Notification slot (in the <em>sender's</em> memory, RemoteAccess.WRITE, 48 bytes per messenger):
 *  0                                  24                                 48
 *  +----------------------------------+----------------------------------+
 *  | consumed chunks (CounterSlot)    | consumed records (CounterSlot)   |
 *  +----------------------------------+----------------------------------+
 *  consumed chunks:  pushed by the receiver when (and only when) a chunk is finished
 *  consumed records: pushed after handling a record tagged TAG_NOTIFY (Seriema's consumed-side Synchronizer)
 *  Each counter has a single writer (the destination thread); CounterSlot keeps a reader from ever seeing a
 *  value torn by a responder that places 8-byte writes byte by byte.
 * </pre>
 *
 * <p><b>Publication.</b> The control byte of a record's header is its flag: the receiver polls the header at its read
 * position with an acquiring load, and a header without VALID means "nothing yet". The sender writes a batch of records
 * (one or many) with {@link io.fabricrpc.transport.Link#writePublished}, which places the first byte of the batch — the
 * first header's control byte — after every other byte, as a single-byte write; headers further into the batch are
 * covered by it. A single byte cannot tear, whereas an RDMA WRITE of a 4- or 8-byte flag may be copied byte by byte
 * by the responder (Soft-RoCE's memcpy did exactly that: a reader saw 0x10 of a header 0x110). So one call costs the receiver one
 * cache line it must fetch, not two (record and a separate producer word), and RDMA needs no extra flag write per
 * batch beyond the 4-byte header. A chunk's data area always keeps 4 bytes for the seal after the last record. Over
 * RDMA a sender may hold a batch's flag back for its next batch's WRITE to carry (the receiver sees no difference:
 * a flag still lands only after every byte it covers; see {@link Messenger}'s deferred publication).
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
    /** Tag bit asking the receiver to push its consumed-record count after handling the record. */
    public static final int TAG_NOTIFY = 0x40;
    /** Tags an application may use: 0..62 (63 is the seal, bits 6 and 7 are the messenger's). */
    public static final int MAX_APPLICATION_TAG = 62;
    static final int LENGTH_SHIFT = 8;
    static final int VALID = 0x80;
    static final int TAG_MASK = 0x3F;
    static final int SEAL_TAG = 0x3F;
    public static final int NOTIFY_CHUNKS_OFFSET = 0;
    public static final int NOTIFY_RECORDS_OFFSET = io.fabricrpc.transport.CounterSlot.LENGTH;
    public static final int NOTIFY_LENGTH = 2 * io.fabricrpc.transport.CounterSlot.LENGTH;
    public static final int MIN_CHUNK_SIZE = 4096;

    /** Acquiring loads of record headers (4-byte aligned). */
    static final VarHandle HEADER = ValueLayout.JAVA_INT.varHandle();

    private ChunkLayout() {
    }

    /** The published header of a record of {@code length} payload bytes with {@code tag} (TAG_NOTIFY included). */
    public static int header(long length, int tag) {
        return (int) (length << LENGTH_SHIFT) | VALID | tag;
    }

    /** Payload length of a record header (the growth of a seal). */
    public static int length(int header) {
        return header >>> LENGTH_SHIFT;
    }

    /** Tag of a record header, TAG_NOTIFY included. */
    static int tag(int header) {
        return header & (TAG_NOTIFY | TAG_MASK);
    }

    static boolean isPublished(int header) {
        return (header & VALID) != 0;
    }

    /** The seal header announcing {@code growth} (0..255) chunks inserted after this one. */
    static int sealHeader(int growth) {
        return growth << LENGTH_SHIFT | VALID | SEAL_TAG;
    }

    static boolean isSeal(int header) {
        return (header & TAG_MASK) == SEAL_TAG;
    }

    static int sealGrowth(int header) {
        return header >>> LENGTH_SHIFT;
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
