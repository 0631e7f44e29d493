package io.fabricrpc.messaging;

import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * Layout of a messenger chunk: a buffer in the <em>receiver's</em> memory that one sender thread fills with
 * call records by one-sided writes (Seriema §4.4.1, sender-controlled buffer management).
 *
 * <pre>
 * Chunk (RemoteAccess.WRITE; allocated by the receiving process through a no-setup service call):
 *  0                        8                                    64                                   chunkSize
 *  +------------------------+------------------------------------+------------------------------------+
 *  | producer word          | (reserved)                         | records ...                        |
 *  +------------------------+------------------------------------+------------------------------------+
 *  producer word (written only by the sender, with Link.writeLong after the records it covers):
 *     bits  0..39  published: bytes of complete records from the start of the data area
 *     bits 48..55  growth: how many new chunks the sender inserted into its ring right after this chunk
 *     bit  63      sealed: the sender has left this chunk; nothing more will be written to it
 *  The receiver resets it to 0 once it has consumed a sealed chunk, before pushing the consumed count.
 *
 * Record (byte-granular: no padding, so a call costs 4 bytes of framing):
 *  0        3        4                       4 + length
 *  +--------+--------+-----------------------+
 *  | length | tag    | payload               |
 *  +--------+--------+-----------------------+
 *  header: little-endian int, length (> 0) in bits 0..23, tag in bits 24..31; tag bit 7 (TAG_NOTIFY) asks
 *  the receiver to push its consumed-record count once the record has been handled
 * *
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
 * <p><b>Invariants.</b> Sender and receiver walk symmetric circular buffers of the same chunks in the same order.
 * With S chunks sealed by the sender and C consumed by the receiver (C ≤ S), the S − C sealed but unconsumed
 * chunks are exactly the ones before the sender's current chunk, so the chunk after the current one is free iff
 * S − C + 1 < ring size. New chunks are inserted right after the current one on both sides: the sender records
 * their number in the growth field of the chunk it seals, and the receiver inserts the same number (taken in
 * allocation order) when it finishes that chunk. The receiver reads records only below {@code published}, which
 * it loads with acquire; the transport delivers the record bytes before the producer word (issue order).
 */
public final class ChunkLayout {
    public static final int PRODUCER_OFFSET = 0;
    public static final int DATA_OFFSET = 64;
    public static final int RECORD_HEADER_LENGTH = 4;
    public static final int RECORD_ALIGNMENT = 1;
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

    static final long PUBLISHED_MASK = (1L << 40) - 1;
    static final int GROWTH_SHIFT = 48;
    static final long GROWTH_MASK = 0xFFL;
    static final long SEALED = 1L << 63;

    static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle();

    private ChunkLayout() {
    }

    static long published(long producerWord) {
        return producerWord & PUBLISHED_MASK;
    }

    static int growth(long producerWord) {
        return (int) ((producerWord >>> GROWTH_SHIFT) & GROWTH_MASK);
    }

    static boolean sealed(long producerWord) {
        return (producerWord & SEALED) != 0;
    }

    static long producerWord(long published, int growth, boolean sealed) {
        return published | ((long) growth << GROWTH_SHIFT) | (sealed ? SEALED : 0);
    }

    /** Bytes a record of {@code length} payload bytes occupies, header and padding included. */
    public static long recordSize(long length) {
        return (RECORD_HEADER_LENGTH + length + RECORD_ALIGNMENT - 1) & -RECORD_ALIGNMENT;
    }

    /** The largest payload one record can carry in a chunk of {@code chunkSize} bytes. */
    public static long maxPayload(int chunkSize) {
        return chunkSize - DATA_OFFSET - RECORD_HEADER_LENGTH;
    }
}
