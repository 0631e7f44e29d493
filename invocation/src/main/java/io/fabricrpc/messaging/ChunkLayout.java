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
 * Record (4-byte aligned):
 *  0                4                       4 + length, padded to a multiple of 4
 *  +----------------+-----------------------+
 *  | length (> 0)   | payload               |
 *  +----------------+-----------------------+
 *
 * Notification word (in the <em>sender's</em> memory, RemoteAccess.WRITE, 8 bytes per messenger):
 *  consumed chunks: how many chunks the receiver has fully consumed, pushed by the receiver with
 *  Link.writeLong when (and only when) a chunk is finished.
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
    public static final int RECORD_ALIGNMENT = 4;
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
