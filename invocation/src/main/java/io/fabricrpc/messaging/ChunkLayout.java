package io.fabricrpc.messaging;

import io.fabricrpc.api.MessengerConfig;

import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * Layout of a messenger chunk: a buffer in the <em>receiver's</em> memory that one sender thread fills with
 * call records by one-sided writes (Seriema §4.4.1, sender-controlled buffer management).
 *
 * <pre>
 * Chunk (RemoteAccess.WRITE; allocated by the receiving process through a no-setup service call; zeroed):
 *  0              8              16                   64                                     chunkSize
 *  +--------------+--------------+-------------------+-------------------------+------+-------+
 *  | first record | record count | (reserved)        | record | record | ...    | seal | zeros |
 *  +--------------+--------------+-------------------+-------------------------+------+-------+
 *  first record, record count (little-endian longs): the chunk's sequence, written by the sender just before its
 *  seal (posted before the seal's write, or stored before the seal's release); the receiver checks both against
 *  its own count when it reads the seal, so a gap or a repeat poisons the channel instead of being skipped
 *
 * Record (4-byte aligned; a call costs 4 bytes of framing plus up to 3 of padding):
 *  0         1        2        3        4                       4 + length          recordSize(length)
 *  +---------+--------+--------+--------+-----------------------+-------------------+
 *  | control | 1 len0 | 1 len1 | 1 len2 | payload               | padding (0..3)    |
 *  +---------+--------+--------+--------+-----------------------+-------------------+
 *  header: little-endian int. control byte = VALID (0x80: the record is published) | TAG_NOTIFY (0x40: the
 *  receiver pushes its consumed-record count once the record has been handled) | FOLLOWS (0x20: this record
 *  starts a later write than the record before it) | tag (0..30). length = len0 | len1 << 7 | len2 << 14 (21 bits,
 *  > 0); each length byte has its top bit set, so a header is wholly placed iff none of bytes 1..3 is zero.
 *
 * Seal (the sender has left the chunk; nothing more will be written to it):
 *  control = VALID | SEAL_TAG (31), plus FOLLOWS when it starts its write, and the length field holds the growth
 *  (0..255): how many new chunks the sender inserted into its ring right after this chunk
 *
 * Notification slot (in the <em>sender's</em> memory, RemoteAccess.WRITE, 376 bytes per messenger):
 *  0            24           48           72         88            184             280             376
 *  +------------+------------+------------+----------+-------------+---------------+---------------+
 *  | consumed   | consumed   | failed     | poison   | poison text | failure text  | failure text  |
 *  | chunks     | records    | records    | word     |             | (failed even) | (failed odd)  |
 *  +------------+------------+------------+----------+-------------+---------------+---------------+
 *  consumed chunks:  pushed by the receiver when (and only when) a chunk is finished
 *  consumed records: pushed after handling a record tagged TAG_NOTIFY (Seriema's consumed-side Synchronizer)
 *  failed records:   TAG_NOTIFY records whose handler threw, pushed before that record's consumed count; the
 *                    text of the latest is in the text slot of its parity, written before the count
 *  poison word:      byte 0 = reason code (0: open; PoisonReason), bytes 8..15 = records run before the
 *                    poisoning point; written once, as one inline write whose first byte lands last, after the
 *                    poison text (a length byte and up to 95 bytes of UTF-8)
 *  Every word has a single writer (the destination thread); the three counters are CounterSlots, so a reader
 *  never sees a value torn by a responder that places 8-byte writes byte by byte.
 * </pre>
 *
 * <p><b>Publication.</b> A record is complete, and the receiver may read it, once any of these holds:
 * <ol>
 *   <li>its control byte has VALID. The receiver polls the header at its read position with an acquiring load. The
 *   sender writes a batch of records (one or many) with {@link io.fabricrpc.transport.Link#writePublished}, which
 *   places the first byte of the batch, the first header's control byte, after every other byte, as a single-byte
 *   write; headers further into the batch carry VALID too and are covered by it. A single byte cannot tear, whereas
 *   an RDMA WRITE of a 4- or 8-byte flag may be copied byte by byte by the responder (Soft-RoCE's memcpy did exactly
 *   that: a reader saw 0x10 of a header 0x110). Over a mapped window the control byte is stored with release.</li>
 *   <li>a later record has FOLLOWS and every record between has a wholly placed header with VALID (written together
 *   with the first, or published on its own): the write that carries FOLLOWS was posted after every write that
 *   carries a record before it, and a responder places a later WRITE of a queue pair after an earlier one. This is
 *   deferred publication over RDMA ({@link Messenger}): a call's records go out with VALID cleared in their first
 *   control byte, and the next call's write, which starts with FOLLOWS, publishes them without re-sending them; a
 *   call no other follows gets its VALID as a 1-byte write. The receiver finds the later record through the
 *   lengths, which it trusts only in wholly placed headers (each of the three length bytes is non-zero once placed,
 *   zero before).</li>
 * </ol>
 * <b>Invariant for FOLLOWS:</b> it is set only on the first record of a write (elsewhere it would land with its
 * write's other bytes, in any order), and only when every write carrying a record before it has been posted. A
 * chunk's data area always keeps 4 bytes for the seal after the last record; the seal is a record like any other
 * here.
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
    /** The largest payload a header can describe (21 bits of length); records must also fit their chunk. */
    public static final int MAX_RECORD_LENGTH = (1 << 21) - 1;
    /** The largest chunk: offsets inside a chunk stay ints. */
    public static final int MAX_CHUNK_SIZE = MessengerConfig.MAX_CHUNK_SIZE;
    /** Tag bit asking the receiver to push its consumed-record count after handling the record. */
    public static final int TAG_NOTIFY = 0x40;
    /** Tags an application may use: 0..30 (31 is the seal; the top three bits are the messenger's). */
    public static final int MAX_APPLICATION_TAG = 30;
    static final int VALID = 0x80;
    /** In a control byte: this record starts a write posted after the one that carried the record before it. */
    static final int FOLLOWS = 0x20;
    static final int TAG_MASK = 0x1F;
    static final int SEAL_TAG = 0x1F;
    /** The top bit of each length byte: set in every header, so a placed length byte is never zero. */
    private static final int LENGTH_MARKS = 0x80_80_80_00;
    public static final int NOTIFY_CHUNKS_OFFSET = 0;
    public static final int NOTIFY_RECORDS_OFFSET = io.fabricrpc.transport.CounterSlot.LENGTH;
    public static final int NOTIFY_FAILURES_OFFSET = 2 * io.fabricrpc.transport.CounterSlot.LENGTH;
    public static final int NOTIFY_POISON_OFFSET = 3 * io.fabricrpc.transport.CounterSlot.LENGTH;
    /** In the poison word: the count of records run before the poisoning point. */
    static final int POISON_RAN_OFFSET = 8;
    static final int POISON_WORD_LENGTH = 16;
    /**
     * A text slot: a length byte, then up to {@link #NOTIFY_TEXT_LENGTH} - 1 bytes of UTF-8. The most one length
     * byte can count, so an exception's class, a method name in its message and the reason after it all fit.
     */
    static final int NOTIFY_TEXT_LENGTH = 256;
    public static final int NOTIFY_POISON_TEXT_OFFSET = NOTIFY_POISON_OFFSET + POISON_WORD_LENGTH;
    public static final int NOTIFY_FAILURE_TEXT_OFFSET = NOTIFY_POISON_TEXT_OFFSET + NOTIFY_TEXT_LENGTH;
    public static final int NOTIFY_LENGTH = NOTIFY_FAILURE_TEXT_OFFSET + 2 * NOTIFY_TEXT_LENGTH;
    /** The chunk's sequence words, before the data area: its first record's number and its record count. */
    static final int SEQUENCE_FIRST_OFFSET = 0;
    static final int SEQUENCE_COUNT_OFFSET = 8;
    static final int SEQUENCE_LENGTH = 16;
    public static final int MIN_CHUNK_SIZE = MessengerConfig.MIN_CHUNK_SIZE;

    /** Acquiring loads of record headers (4-byte aligned). */
    static final VarHandle HEADER = ValueLayout.JAVA_INT.varHandle();

    private ChunkLayout() {
    }

    /** The published header of a record of {@code length} payload bytes with {@code tag} (TAG_NOTIFY included). */
    public static int header(long length, int tag) {
        int n = (int) length;
        return (n & 0x7F) << 8 | (n >>> 7 & 0x7F) << 16 | (n >>> 14 & 0x7F) << 24 | LENGTH_MARKS | VALID | tag;
    }

    /** Payload length of a record header (the growth of a seal). */
    public static int length(int header) {
        return (header >>> 8 & 0x7F) | (header >>> 9 & (0x7F << 7)) | (header >>> 10 & (0x7F << 14));
    }

    /** Tag of a record header, TAG_NOTIFY included. */
    static int tag(int header) {
        return header & (TAG_NOTIFY | TAG_MASK);
    }

    static boolean isPublished(int header) {
        return (header & VALID) != 0;
    }

    /** Whether all three length bytes of the header are placed (a header being written may be read in part). */
    static boolean isPlaced(int header) {
        return (header & LENGTH_MARKS) == LENGTH_MARKS;
    }

    static boolean follows(int control) {
        return (control & FOLLOWS) != 0;
    }

    /** The seal header announcing {@code growth} (0..255) chunks inserted after this one. */
    static int sealHeader(int growth) {
        return header(growth, SEAL_TAG);
    }

    static boolean isSeal(int header) {
        return (header & TAG_MASK) == SEAL_TAG;
    }

    static int sealGrowth(int header) {
        return length(header);
    }

    /** Bytes a record of {@code length} payload bytes occupies, header and padding included. */
    public static long recordSize(long length) {
        return (RECORD_HEADER_LENGTH + length + RECORD_ALIGNMENT - 1) & -RECORD_ALIGNMENT;
    }

    /**
     * The whole framed records at the front of {@code [offset, offset + length)} of {@code bytes} that fit in
     * {@code free} bytes, as {@code size << 32 | records}; 0 if not even the first fits.
     */
    public static long framedPrefix(java.lang.foreign.MemorySegment bytes, long offset, long length, long free) {
        long take = 0;
        long records = 0;
        while (take < length) {
            long size = recordSize(length(bytes.get(ValueLayout.JAVA_INT_UNALIGNED, offset + take)));
            if (take + size > free) {
                break;
            }
            take += size;
            records++;
        }
        return take << 32 | records;
    }

    /** Bytes of a chunk's data area that records may fill (the seal keeps its 4 bytes). */
    public static int recordCapacity(int chunkSize) {
        return chunkSize - DATA_OFFSET - SEAL_LENGTH;
    }

    /** The largest payload one record can carry in a chunk of {@code chunkSize} bytes. */
    public static long maxPayload(int chunkSize) {
        return Math.min(recordCapacity(chunkSize) - RECORD_HEADER_LENGTH, MAX_RECORD_LENGTH);
    }
}
