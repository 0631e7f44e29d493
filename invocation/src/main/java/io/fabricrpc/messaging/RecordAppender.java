package io.fabricrpc.messaging;

import io.fabricrpc.api.MessagingException;

import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Frames records into the current chunk, claim and commit in one step: the writer serializes into the claimed room
 * (the receiver's mapped chunk, or staging at the same offset), then the header commits the record. Returns
 * {@link #APPENDED} or {@link #DOES_NOT_FIT}; never waits, never transmits, never decides policy.
 *
 * <p>Invariant: bytes beyond {@code position} are zero in a mapped chunk; {@code appended} ({@code gen << 34 |
 * IN_STAGING? | position}) is stored with release after the records it covers, and is the only word of this class
 * another thread reads, with {@code held} (a window batch's first header, stored before it) and the chunk/window of
 * its generation. Owner (sending) thread only writes them; the publisher's transmit position and the messenger's
 * look-always flag (both CAS) are stored here too.
 * {@link Messenger} is the only subclass, for its field layout.
 */
class RecordAppender {
    static final int APPENDED = 1;
    /** The record does not fit the rest of the current chunk; nothing was written. */
    static final int DOES_NOT_FIT = 0;
    /** How a record is framed: in staging, or in the mapped chunk with its header stored now or held. */
    static final int STAGE = 0;
    static final int WINDOW_STORE = 1;
    static final int WINDOW_HOLD = 2;

    /**
     * Frame-only records at least this large on average go straight into a mapped window; smaller ones are batched
     * in staging and copied once per batch, which measured faster (fewer stores into lines the receiver polls).
     */
    static final int WINDOW_MIN_AVERAGE_RECORD = 128;
    static final long IN_STAGING = 1L << 33;
    static final long OFFSET_MASK = 0xFFFF_FFFFL;
    static final int GEN_SHIFT = 34;

    private static final VarHandle APPENDED_WORD;
    private static final VarHandle HELD;
    private static final VarHandle TRANSMIT;
    private static final VarHandle LOOK_ALWAYS;

    static {
        try {
            APPENDED_WORD = MethodHandles.lookup().findVarHandle(RecordAppender.class, "appended", long.class);
            HELD = MethodHandles.lookup().findVarHandle(RecordAppender.class, "held", long.class);
            TRANSMIT = MethodHandles.lookup().findVarHandle(RecordAppender.class, "transmit", long.class);
            LOOK_ALWAYS = MethodHandles.lookup().findVarHandle(RecordAppender.class, "lookAlways", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final LocalRegion staging;
    final MemorySegment stagingSegment;
    final int recordCapacity;

    // ---- owner thread; read by a transmit claimant after it acquired `appended` ----
    /** The current chunk, mapped (shared memory), or null. */
    MemorySegment window;
    RemoteRegion chunk;
    long gen;
    /** Data offset where the next record goes. */
    long position;
    /** The current chunk is sealed: nothing more goes into it; the move to the next waits for the receiver. */
    boolean sealed;
    /** Whether the batch not yet transmitted sits in staging (mapped chunks only; chosen at a batch's start). */
    boolean batchInStaging;
    /** Frame-only records: the current batch's start and records so far, and the previous batch's choice. */
    private long batchStart;
    private int batchRecords;
    private boolean preferStaging;
    @SuppressWarnings("unused") // through APPENDED_WORD
    private long appended;
    /**
     * The {@link Publisher}'s transmit position, kept here so the send path reads one object. Not the appender's
     * own: changed only by the publisher's claims (CAS, then release) and its {@code soIdle} (release).
     */
    @SuppressWarnings("unused") // through TRANSMIT
    private long transmit;
    /** The held first header of a batch framed in the window, {@code chunkOffset << 32 | header}, or -1. */
    @SuppressWarnings("unused") // through HELD
    private long held = -1;
    /**
     * The messenger's: whether every send must look at the poison word and the link (a look found the channel
     * poisoned, or the link's failure hook ran), kept here so every send reads one object. Set once (false to true) by
     * CAS ({@link #casLookAlways}), by whichever thread looked or failed the link.
     */
    private boolean lookAlways;

    RecordAppender(LocalRegion staging, int chunkSize) {
        this.staging = staging;
        this.stagingSegment = staging.segment();
        this.recordCapacity = ChunkLayout.recordCapacity(chunkSize);
    }

    /** Plain: a CAS on another thread shows here at the latest at the owner's next look (a call, out of line). */
    final boolean lpLookAlways() {
        return lookAlways;
    }

    /** Any thread whose look found the poison, or that failed the link: from then on every send of the owner looks. */
    final void casLookAlways() {
        LOOK_ALWAYS.compareAndSet(this, false, true);
    }

    static void checkTag(int tag) {
        int application = tag & ~ChunkLayout.TAG_NOTIFY;
        if (application < 0 || application > ChunkLayout.MAX_APPLICATION_TAG) {
            throw new IllegalArgumentException("record tag must be 0.." + ChunkLayout.MAX_APPLICATION_TAG
                    + ", optionally with TAG_NOTIFY, got " + tag);
        }
    }

    /** Starts generation {@code gen} at offset 0 (set-up, or the move to the next chunk). */
    void reset(long gen, RemoteRegion chunk, MemorySegment window) {
        this.gen = gen;
        this.chunk = chunk;
        this.window = window;
        this.position = 0;
        this.sealed = false;
        this.batchInStaging = false;
    }

    /**
     * How a frame-only record goes into a mapped chunk. A batch's placement is chosen at its start ({@code starts}:
     * nothing is pending), from the previous batch's average record size; its first header is then held.
     */
    int placement(boolean starts) {
        if (starts) {
            if (batchRecords > 0 && position > batchStart) {
                preferStaging = position - batchStart < (long) WINDOW_MIN_AVERAGE_RECORD * batchRecords;
            }
            batchStart = position;
            batchRecords = 0;
            batchInStaging = preferStaging;
        }
        batchRecords++;
        return batchInStaging ? STAGE : starts ? WINDOW_HOLD : WINDOW_STORE;
    }

    /** The payload a record may have at the current position: the chunk's rest, or the header's limit. */
    long room() {
        return Math.min(recordCapacity - position - ChunkLayout.RECORD_HEADER_LENGTH, ChunkLayout.MAX_RECORD_LENGTH);
    }

    /**
     * Frames one record at the current position ({@code how}: {@link #STAGE}, {@link #WINDOW_STORE},
     * {@link #WINDOW_HOLD}). A writer that fails or does not fit the window leaves the room it scribbled on zeroed.
     */
    int frame(int tag, RecordWriter writer, int how) {
        long room = room();
        if (room <= 0) {
            return DOES_NOT_FIT;
        }
        long at = ChunkLayout.DATA_OFFSET + position;
        long length;
        if (how == STAGE) {
            length = writer.write(stagingSegment, at + ChunkLayout.RECORD_HEADER_LENGTH, room);
        } else {
            try {
                length = writer.write(window, at + ChunkLayout.RECORD_HEADER_LENGTH, room);
            } catch (RuntimeException | Error e) {
                window.asSlice(at + ChunkLayout.RECORD_HEADER_LENGTH, room).fill((byte) 0);
                throw e;
            }
            if (length < 0) {
                window.asSlice(at + ChunkLayout.RECORD_HEADER_LENGTH, room).fill((byte) 0);
            }
        }
        if (length < 0) {
            return DOES_NOT_FIT;
        }
        if (length == 0 || length > room) {
            throw new MessagingException("record writer reported " + length + " bytes with " + room
                    + " available (must be > 0)");
        }
        commit(at, ChunkLayout.header(length, tag), how);
        position += ChunkLayout.recordSize(length);
        return APPENDED;
    }

    /** {@link #frame} for a writer of known length that fits ({@code length <= room()}). */
    void frameKnown(int tag, RecordWriter writer, int length, int how) {
        long at = ChunkLayout.DATA_OFFSET + position;
        writer.writeKnown(how == STAGE ? stagingSegment : window, at + ChunkLayout.RECORD_HEADER_LENGTH);
        commit(at, ChunkLayout.header(length, tag), how);
        position += ChunkLayout.recordSize(length);
    }

    /**
     * {@link #frameKnown} with {@link #WINDOW_STORE}, one call shallower: the send path inlines into callers that are
     * deep already, and the header's VarHandle chain must still fit the JIT's inlining depth.
     */
    void frameKnownAndStore(int tag, RecordWriter writer, int length) {
        long at = ChunkLayout.DATA_OFFSET + position;
        writer.writeKnown(window, at + ChunkLayout.RECORD_HEADER_LENGTH);
        ChunkLayout.HEADER.setRelease(window, at, ChunkLayout.header(length, tag)); // release: after the record
        position += ChunkLayout.recordSize(length);
    }

    /** Frames the seal (announcing {@code growth} new chunks) where the next record would go; the room is kept. */
    void frameSeal(int growth, int how) {
        commit(ChunkLayout.DATA_OFFSET + position, ChunkLayout.sealHeader(growth), how);
        position += ChunkLayout.SEAL_LENGTH;
    }

    private void commit(long at, int header, int how) {
        switch (how) {
            case STAGE -> stagingSegment.set(ValueLayout.JAVA_INT_UNALIGNED, at, header);
            // Release: the record's bytes first; it is visible as soon as every record before it is.
            case WINDOW_STORE -> ChunkLayout.HEADER.setRelease(window, at, header);
            // Release: a transmitter that acquires `appended` and then this stores it after the record's bytes.
            default -> HELD.setRelease(this, at << 32 | (header & 0xFFFF_FFFFL));
        }
    }

    /** Frames records already framed elsewhere: {@code bytes} were written to the chunk at the current position. */
    void framedElsewhere(long bytes) {
        position += bytes;
    }

    /** Release: every record framed so far may be transmitted by whoever claims the transmit position. */
    void soAppended() {
        APPENDED_WORD.setRelease(this, gen << GEN_SHIFT | (batchInStaging ? IN_STAGING : 0) | position);
    }

    /** Acquire: pairs with {@link #soAppended}; a transmitter on another thread reads it before the transmit word. */
    long lvAppended() {
        return (long) APPENDED_WORD.getAcquire(this);
    }

    long lvTransmit() {
        return (long) TRANSMIT.getAcquire(this);
    }

    boolean casTransmit(long expected, long value) {
        return TRANSMIT.compareAndSet(this, expected, value);
    }

    void soTransmit(long value) {
        TRANSMIT.setRelease(this, value);
    }

    /** Acquire: the held first header, after {@link #lvAppended}. */
    long lvHeld() {
        return (long) HELD.getAcquire(this);
    }

    static long offset(long word) {
        return word & OFFSET_MASK;
    }

    static long gen(long word) {
        return word >>> GEN_SHIFT;
    }

    /** Bytes of staging, as written so far, for a transmitter copying or posting {@code [from, to)} of a chunk. */
    MemorySegment stagingSegment() {
        return stagingSegment;
    }
}
