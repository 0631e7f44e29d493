package io.fabricrpc.messaging;

import io.fabricrpc.transport.CounterSlot;
import io.fabricrpc.transport.Link;
import io.fabricrpc.transport.PeerFailedException;
import io.fabricrpc.transport.LocalRegion;
import io.fabricrpc.transport.RemoteAccess;
import io.fabricrpc.transport.RemoteRegion;
import org.agrona.concurrent.IdleStrategy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The sending half of a one-sided channel from one sender thread to one destination thread (Seriema's
 * {@code RDMAMessenger}): records are serialized straight into a staging region the transport sends from,
 * written into the current remote chunk, and published by their own headers. Chunks are obtained
 * on first use ({@code c} of them) and grown up to {@code cMax} through no-setup service calls; when all are
 * full the {@link FullPolicy} decides. Layout and invariants: {@link ChunkLayout}.
 *
 * <p>Owned by its sender thread: {@link #send} is not thread-safe. {@link FullPolicy#RETRY_ASYNC} is a channel over a
 * FAIL messenger ({@link AsyncQueueChannel}), not a mode of this class.
 *
 * <p><b>Deferred publication</b> (transports without a mapped window, i.e. RDMA). Publishing a record there takes two
 * WRITEs: the record without its first byte, then that byte (its flag) alone, since only a later WRITE is placed
 * after the record and only a single byte cannot tear ({@link Link#writePublished}). When calls follow each other
 * the second WRITE is saved: a call's records go out with their flag cleared ({@link Link#writeFirstByteAs}) and the
 * flag waits (the waiting range, below); the next call's WRITE starts with a record marked FOLLOWS, which publishes
 * the waiting records without sending them again (ChunkLayout, rule 2). FOLLOWS is set only on a WRITE this thread
 * posts after it posted the waiting records itself, and after the flusher posted any held records it claimed, so it
 * never lands before records it stands for. A waiting flag is also sent alone: by the sender whenever it flushes,
 * waits or seals the chunk, and by the node's flusher thread once it has waited
 * {@link MessengerConfig#publicationDelay} at most. Every flag write is idempotent (the same byte from the same
 * staging copy), so the sender and the flusher may both send one. The flusher sends one only under
 * {@code publicationLock}, which the sender holds to seal and leave a chunk: a late flag never lands in a chunk the
 * receiver has already zeroed for reuse, and staging is refilled only after the seal (posted later) completed.
 *
 * <p><b>Coalescing</b> ({@link MessengerConfig#coalescing}). While the link is backlogged ({@link Link#isBacklogged}:
 * its writes queue in front of the device), a call is not written at all: its records join the waiting range as
 * <em>held</em> ({@code UNSENT}), and the next call that finds the link free sends them, with its own, in one WRITE
 * without the first flag, which goes later (it covers every record behind it, as a batch's first header does). So a
 * stream faster than the device costs one WRITE per device slot, not per call; a call on an idle link goes out at
 * once. Held records go out on every path that sends a waiting flag, within the publication delay at most.
 *
 * <p><b>The waiting range</b> ({@code deferred}, packed {@code start << 32 | end}, plus {@code UNSENT}): the records
 * {@code [start, end)} of the current chunk whose first flag has not been sent; without {@code UNSENT} all their
 * bytes have been written, the first with its flag cleared. Invariant: a write never clears a flag that may already
 * have been sent (a flag-cleared byte goes out once, in the WRITE that carries its record first). A held range is
 * sent by whoever claims it with a CAS to -1 (the sender, or the flusher, which claims before it writes and writes
 * under {@code publicationLock}), and the sender extends a held range by CAS only, so a range the flusher has
 * claimed is never extended. A flag-only range is replaced, not extended, when the next WRITE marks FOLLOWS.
 *
 * <p><b>Appended records published by another thread</b> ({@link #append}, {@link #publishAppendedFromAnotherThread};
 * traditional aggregation, whose flusher pushes out a batch its sender left waiting). No lock per append. Invariant:
 * the two threads write no byte of the chunk differently, and none unordered with the reader:
 * <ul>
 *   <li>the sender writes only beyond {@code appended} (the end of the appended records, packed
 *   {@code sealed << 32 | IN_WINDOW? | position}: an end in a chunk since left is recognised as stale, and the
 *   batch's kind travels with its end) and stores the new end with release after each append;</li>
 *   <li>over a window, a batch's first header is held ({@code held}: its offset and value in one word, stored with
 *   release after the record) until the batch is published, and every other appended header is stored with
 *   release: the records before it may have been published by the other thread already, and the receiver reads on
 *   as soon as a header lands. Publishing such a batch is storing the held header, which either thread may do, in
 *   any order and twice: the same value at the same place, and no chunk is left (sealed) while the other thread is
 *   at it, since that thread holds {@code publicationLock} and so does a seal;</li>
 *   <li>a batch in staging is copied into the chunk, by either thread under {@code publicationLock} only: over RDMA
 *   a range must not be written twice while the receiver reads on behind it;</li>
 *   <li>{@code published} only grows: stored with release by the sender, moved by the other thread with a CAS from
 *   the value it started from; the sender reads it with acquire.</li>
 * </ul>
 */
public final class Messenger implements RecordChannel {
    private final MessagingNode node;
    private final Link link;
    private final long sender;
    private final long destination;
    private final MessengerConfig config;
    private final int recordCapacity;
    private final LocalRegion staging;
    private final MemorySegment stagingSegment;
    private final LocalRegion notifyRegion;
    private final long notifyOffset;
    private final IdleStrategy idle;

    private RemoteRegion[] ring = new RemoteRegion[0];
    /** The current chunk mapped into this process (shared memory), or null: records then go through staging. */
    private MemorySegment window;
    private int current;
    private long position;
    private long sealed;
    private long knownConsumed;
    private long knownConsumedRecords;
    private int growthSinceSeal;
    private long lastTicket;
    private long recordsSent;
    /**
     * Bytes of the current chunk already written and published; records beyond it wait in staging (or, appended, in
     * the window). Stored with release ({@link #soPublished}): another thread may publish appended records.
     */
    private long published;
    /** The current chunk is sealed and the move to the next one waits for the receiver to free it. */
    private boolean currentSealed;

    private Runnable waitHelper = () -> { };

    private static final VarHandle DEFERRED;
    private static final VarHandle PUBLISHED;
    private static final VarHandle APPENDED;
    private static final VarHandle HELD;

    static {
        try {
            DEFERRED = MethodHandles.lookup().findVarHandle(Messenger.class, "deferred", long.class);
            PUBLISHED = MethodHandles.lookup().findVarHandle(Messenger.class, "published", long.class);
            APPENDED = MethodHandles.lookup().findVarHandle(Messenger.class, "appended", long.class);
            HELD = MethodHandles.lookup().findVarHandle(Messenger.class, "held", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /**
     * The held first header of an appended batch in the window, {@code offset << 32 | header}, or -1 (see the class
     * doc). Accessed through {@link #HELD}.
     */
    @SuppressWarnings("unused")
    private long held = -1;
    /** In {@code appended}: the batch goes into the window (else staging). */
    private static final long IN_WINDOW = 0x8000_0000L;
    private static final long APPENDED_POSITION = 0x7FFF_FFFFL;
    /**
     * The end of the appended records, {@code sealed << 32 | IN_WINDOW? | position}, stored with release after each
     * append and read with acquire by another thread's publication (see the class doc). Accessed through
     * {@link #APPENDED}.
     */
    @SuppressWarnings("unused")
    private long appended;
    /**
     * Appended records at least this large on average go straight into a mapped window; smaller ones are batched in
     * staging and copied once per batch. Measured on shm (trad, build against build): direct writes gained 15-20% at
     * 264-byte records and lost 10-20% at 16-byte ones, whose many small stores into the receiver's lines cost more
     * than one streaming copy of the batch.
     */
    static final int WINDOW_APPEND_MIN_RECORD = 128;
    /** Where the current batch of appended records is (window or staging), and where the next batch goes. */
    private boolean batchInWindow = true;
    private boolean appendsInWindow = true;
    /** Records appended to the current batch (mapped windows only). */
    private int batchRecords;
    /** Whether this messenger may defer flags at all (a positive publication delay). */
    private final boolean defers;
    /** Whether it may also hold whole calls while the link is backlogged. */
    private final boolean coalesces;
    /**
     * The waiting range (see the class doc), or -1. Set by the sender thread with a volatile store after the WRITE of
     * the range's bytes was posted (or, for a held range, by CAS); cleared by the sender, or claimed (CAS to -1) by the
     * sender or by the flusher before it sends the range. Accessed through {@link #DEFERRED}.
     */
    @SuppressWarnings("unused")
    private long deferred = -1;
    /** Sender thread: records were held since this thread last posted a FOLLOWS (the flusher may post them). */
    private boolean heldSinceFollows;
    /** In {@code deferred}: the range's bytes have not been written yet (held calls). */
    private static final long UNSENT = 1L << 62;
    /** Held to seal and leave a chunk, and by the flusher thread to post a waiting flag. */
    private final ReentrantLock publicationLock = new ReentrantLock();
    /** The messenger is on the flusher's watch list (plain: a racing second add to the set is harmless). */
    private boolean watched;
    /** Flusher thread only: the waiting flag it saw at its previous look (-1 if none). */
    private long flusherSeen = -1;
    /** Ticket of the latest flag posted by {@link #postDeferredFlag}; volatile: the flusher writes it, close reads it. */
    private volatile long flagTicket;
    private volatile boolean closed;

    Messenger(MessagingNode node, Link link, long sender, long destination, MessengerConfig config,
              LocalRegion notifyRegion, long notifyOffset) {
        this.node = node;
        this.link = link;
        this.sender = sender;
        this.destination = destination;
        this.config = config;
        this.recordCapacity = ChunkLayout.recordCapacity(config.chunkSize());
        this.staging = node.transport().allocate(config.chunkSize(), RemoteAccess.NONE);
        this.stagingSegment = staging.segment();
        this.notifyRegion = notifyRegion;
        this.notifyOffset = notifyOffset;
        this.idle = node.idleStrategy();
        if (config.fullPolicy() == FullPolicy.RETRY_ASYNC) {
            throw new IllegalArgumentException("RETRY_ASYNC is a channel over a FAIL messenger (MessagingNode.channel)");
        }
        this.defers = !config.publicationDelay().isZero();
        this.coalesces = defers && config.coalescing();
    }

    public long sender() {
        return sender;
    }

    @Override
    public long destination() {
        return destination;
    }

    /** Chunks this messenger holds in the receiver (grows from c to cMax). */
    public int chunkCount() {
        return ring.length;
    }

    /**
     * Work the sender thread does while RETRY waits for space, e.g. running the calls addressed to it, so that
     * two threads filling each other's buffers cannot deadlock.
     */
    public void whileWaiting(Runnable helper) {
        this.waitHelper = helper;
    }

    /** Runs the {@link #whileWaiting} work once: for layers above that wait for this messenger to have room. */
    public void helpWhileWaiting() {
        waitHelper.run();
    }

    /** Where the next record goes in the current chunk (tests use it to play a misbehaving sender). */
    long writeOffset() {
        return ChunkLayout.DATA_OFFSET + position;
    }

    /** The chunk being filled (tests use it to play a misbehaving sender). */
    RemoteRegion currentChunk() {
        return ring[current];
    }

    @Override
    public Link link() {
        return link;
    }

    /** Records sent (or queued) so far; the sequence number of the latest record. */
    @Override
    public long recordsSent() {
        return recordsSent;
    }

    /** Records the receiver has handled, as of its latest push (only records tagged TAG_NOTIFY push). */
    @Override
    public long consumedRecords() {
        // A racing reader on another thread may store an older sound value: the next read makes up for it.
        long read = CounterSlot.read(notifyRegion.segment(), notifyOffset + ChunkLayout.NOTIFY_RECORDS_OFFSET,
                knownConsumedRecords); // pushed by the receiver
        knownConsumedRecords = read;
        return read;
    }

    /** The completion ticket of the latest write from staging ({@link Link#isComplete}). */
    @Override
    public long lastTicket() {
        return lastTicket;
    }

    /** What a send does when every chunk up to cMax is full. */
    public FullPolicy fullPolicy() {
        return config.fullPolicy();
    }

    /** How long a wait for room (RETRY, a flush) may last before it fails. */
    public java.time.Duration timeout() {
        return config.timeout();
    }

    @Override
    public long bufferedBytes() {
        long waiting = (long) DEFERRED.getAcquire(this);
        return stagedBytes() + (waiting < 0 ? 0 : rangeEnd(waiting) - rangeStart(waiting));
    }

    /** Publishes appended records and any waiting flag. */
    @Override
    public void flush() {
        publish();
    }

    /**
     * Sends one record written by {@code writer}.
     *
     * @return true if the record was sent; false only under FAIL when every chunk up to cMax is full
     * @throws MessagingException if the record cannot fit even an empty chunk, the receiver does not free a chunk within the timeout (RETRY), or chunk allocation fails
     * @throws io.fabricrpc.transport.PeerFailedException if the destination process is gone
     */
    public boolean send(RecordWriter writer) {
        return send(0, writer);
    }

    @Override
    public Messenger directMessenger() {
        return this;
    }

    /**
     * Sends one record with an application {@code tag} (0..{@link ChunkLayout#MAX_APPLICATION_TAG}), optionally ORed with
     * {@link ChunkLayout#TAG_NOTIFY} to have the receiver report its consumption ({@link #consumedRecords()}).
     * The record's sequence number (1, 2, ... per messenger) is {@link #recordsSent()} right after the call.
     *
     * @see #send(RecordWriter) for results and failures
     */
    public boolean send(int tag, RecordWriter writer) {
        checkTag(tag);
        // The common case stays small enough to inline into the caller; set-up and full chunks do not.
        if (ring.length != 0) {
            if (writeKnownInWindow(tag, writer) || tryWrite(tag, writer, true)) {
                recordsSent++;
                return true;
            }
            return whenFull(tag, writer);
        }
        return sendUncommon(tag, writer);
    }

    /**
     * The commonest send, in place: a record of known length ({@link RecordWriter#knownLength}) that fits the current
     * chunk of a mapped window with nothing appended before it. False, with nothing written, in every other case,
     * which {@link #tryWrite} handles. Skipping tryWrite's general path saved 1.5 to 3.5 ns of a 16 to 32 ns send
     * (call-cost benchmark, 3 alternating pairs).
     */
    private boolean writeKnownInWindow(int tag, RecordWriter writer) {
        int length = writer.knownLength();
        if (length <= 0 || window == null || currentSealed || published != position || length > room(position)) {
            return false;
        }
        link.checkAlive();
        long at = ChunkLayout.DATA_OFFSET + position;
        writer.writeKnown(window, at + ChunkLayout.RECORD_HEADER_LENGTH);
        publishInWindow(at, ChunkLayout.header(length, tag), length);
        return true;
    }

    /** Publishes the record just written in the window at {@code at}, the last one of the current chunk so far. */
    private void publishInWindow(long at, int header, long length) {
        // Release: the record's bytes, written by plain stores, become visible before its header (the same
        // publication as Link.writePublished after a copy; here there is nothing to copy).
        ChunkLayout.HEADER.setRelease(window, at, header);
        position += ChunkLayout.recordSize(length);
        soPublished(position);
    }

    /** Release: pairs with the acquiring reads of a thread that publishes or counts appended records. */
    private void soPublished(long value) {
        PUBLISHED.setRelease(this, value);
    }

    /** {@code published} as another thread's publication of appended records may have left it. */
    private long lvPublished() {
        return (long) PUBLISHED.getAcquire(this);
    }

    /**
     * Frames the record the writer put at {@code at}, in the window ({@code direct}) or in staging, without publishing
     * it; then stores the new end of the appended records with release, after the record's bytes: another thread may
     * publish up to here from now on.
     */
    private void appended(int tag, long at, long length, boolean direct) {
        if (direct) {
            appendedInWindow(at, ChunkLayout.header(length, tag), length);
        } else {
            stage(tag, at, length);
        }
        APPENDED.setRelease(this, sealed << 32 | (direct ? IN_WINDOW : 0) | position);
    }

    /** Stores a held first header (release: after its record's bytes; a no-op if another thread stored it). */
    private void publishHeld(long held) {
        ChunkLayout.HEADER.setRelease(window, held >>> 32, (int) held);
    }

    /** {@link #send(int, RecordWriter)} before set-up. */
    private boolean sendUncommon(int tag, RecordWriter writer) {
        setUp();
        if (tryWrite(tag, writer, true)) {
            recordsSent++;
            return true;
        }
        return whenFull(tag, writer);
    }

    /** Every chunk up to cMax is full: what the policy says. */
    private boolean whenFull(int tag, RecordWriter writer) {
        switch (config.fullPolicy()) {
            case FAIL -> {
                return false;
            }
            case RETRY, RETRY_ASYNC -> { // RETRY_ASYNC never reaches a messenger (constructor)
                awaitSpace();
                if (!tryWrite(tag, writer, true)) {
                    throw oversize();
                }
            }
        }
        recordsSent++;
        return true;
    }

    /**
     * Writes into the current chunk, moving to the next one if needed; false if all chunks are full. The tag is a
     * parameter, not a field: a RETRY wait may run calls that send on this messenger in between. A record to publish
     * now goes straight into the receiver's chunk when the transport maps it (shared memory), else through staging.
     */
    private boolean tryWrite(int tag, RecordWriter writer, boolean publishNow) {
        if (currentSealed && !advance()) {
            return false;
        }
        if (publishNow && lvPublished() != position) {
            publish(); // appended records go first, as every publication of them does (see the class doc)
        }
        boolean direct = window != null && (publishNow || countAppendAndChooseWindow());
        if (direct && publishNow) {
            link.checkAlive();
        }
        long at = ChunkLayout.DATA_OFFSET + position;
        long length = serialize(writer, direct, at, room(position));
        if (length < 0) {
            length = serializeInNextChunk(writer, direct);
            if (length < 0) {
                return false;
            }
            at = ChunkLayout.DATA_OFFSET;
        }
        if (length == 0 || length > room(position)) {
            throw badLength(length);
        }
        if (!publishNow) {
            appended(tag, at, length, direct);
        } else if (direct) {
            publishInWindow(at, ChunkLayout.header(length, tag), length);
        } else {
            stage(tag, at, length);
            if (coalesces && link.isBacklogged(lastTicket)) {
                holdStaged();
            } else {
                publishStaged(defers);
            }
        }
        return true;
    }

    /** The record does not fit the current chunk: moves to the next and serializes there; -1 if none is free yet. */
    private long serializeInNextChunk(RecordWriter writer, boolean direct) {
        if (position == 0) {
            throw oversize();
        }
        if (!advance()) {
            return -1;
        }
        long length = serialize(writer, direct, ChunkLayout.DATA_OFFSET, maxPayload());
        if (length < 0) {
            throw oversize();
        }
        return length;
    }

    private MessagingException badLength(long length) {
        return new MessagingException("record writer reported " + length + " bytes with "
                + room(position) + " available (must be > 0)");
    }

    /** Lets the writer serialize the record after its header at {@code at}: -1 if it does not fit {@code room}. */
    private long serialize(RecordWriter writer, boolean direct, long at, long room) {
        if (room <= 0) {
            return -1;
        }
        return direct ? writeInWindow(writer, at, room)
                : writer.write(stagingSegment, at + ChunkLayout.RECORD_HEADER_LENGTH, room);
    }

    /**
     * Lets the writer serialize into the window after the header at {@code at}. A writer that fails or does not fit
     * may have scribbled over the room it was given: zero it, since beyond the last header the chunk must stay zero.
     */
    private long writeInWindow(RecordWriter writer, long at, long room) {
        long length;
        try {
            length = writer.write(window, at + ChunkLayout.RECORD_HEADER_LENGTH, room);
        } catch (RuntimeException | Error e) {
            window.asSlice(at + ChunkLayout.RECORD_HEADER_LENGTH, room).fill((byte) 0);
            throw e;
        }
        if (length < 0) {
            window.asSlice(at + ChunkLayout.RECORD_HEADER_LENGTH, room).fill((byte) 0);
        }
        return length;
    }

    // ---- aggregation support: deferred publication and pre-framed records ----

    /**
     * Serializes a record at the current chunk position without sending it (Seriema's traditional aggregation,
     * zero-copy): into staging, from where the batch is later written, or, when the transport maps the chunk (shared
     * memory) and records are large ({@link #WINDOW_APPEND_MIN_RECORD}), straight into the receiver's chunk, where
     * publishing it is one releasing store. The record goes out with
     * the next {@link #publish()}, or when the chunk fills. Full chunks follow the {@link FullPolicy} as in
     * {@link #send(int, RecordWriter)}.
     *
     * @return false under FAIL when every chunk is full
     */
    public boolean append(int tag, RecordWriter writer) {
        checkTag(tag);
        // The common case stays small enough to inline into the aggregator, as in send.
        if (ring.length != 0 && appendKnown(tag, writer)) {
            recordsSent++;
            return true;
        }
        return appendUncommon(tag, writer);
    }

    /**
     * The commonest append, in place: a record of known length ({@link RecordWriter#knownLength}) that fits the
     * current chunk, framed where {@link #tryWrite} would frame it, without its general path. False, with nothing
     * written, in every other case.
     */
    private boolean appendKnown(int tag, RecordWriter writer) {
        int length = writer.knownLength();
        if (length <= 0 || currentSealed || length > room(position)) {
            return false;
        }
        long at = ChunkLayout.DATA_OFFSET + position;
        boolean direct = window != null && countAppendAndChooseWindow();
        writer.writeKnown(direct ? window : stagingSegment, at + ChunkLayout.RECORD_HEADER_LENGTH);
        appended(tag, at, length, direct);
        return true;
    }

    /** {@link #append} before set-up, for a writer of unknown length, or into a full chunk. */
    private boolean appendUncommon(int tag, RecordWriter writer) {
        if (ring.length == 0) {
            setUp();
        }
        if (!tryWrite(tag, writer, false)) {
            if (config.fullPolicy() == FullPolicy.FAIL) {
                return false;
            }
            awaitSpace();
            if (!tryWrite(tag, writer, false)) {
                throw oversize();
            }
        }
        recordsSent++;
        return true;
    }

    /**
     * Sends every appended record not yet sent, and any waiting flag. Sender thread; its sends and framed writes
     * publish appended records through here too, so a copy from staging always holds the lock (see the class doc).
     */
    public void publish() {
        if (ring.length == 0) {
            return;
        }
        if (window != null && batchInWindow && published != position) {
            publishStaged(false); // a batch in the window: no lock (see the class doc)
            return;
        }
        publicationLock.lock(); // a copy from staging: another thread may be publishing appended records
        try {
            publishStaged(false);
        } finally {
            publicationLock.unlock();
        }
    }

    @Override
    public void publishBuffered() {
        publish();
    }

    /**
     * Publishes the records appended so far, from any thread, without racing the sender's appends (see the class
     * doc): what a sender that went quiet left waiting. Never waits for room; a dead destination is left to the
     * sender, which learns it when it next publishes.
     */
    public void publishAppendedFromAnotherThread() {
        publicationLock.lock(); // no seal meanwhile, and no other copy from staging
        try {
            long appendedEnd = (long) APPENDED.getAcquire(this); // sees the appended bytes and the held header
            long from = lvPublished();
            long end = appendedEnd & APPENDED_POSITION;
            if (closed || ring.length == 0 || currentSealed || appendedEnd >>> 32 != sealed || end <= from) {
                return; // nothing appended waits in the current chunk (a chunk left was published by its seal)
            }
            if ((appendedEnd & IN_WINDOW) != 0) {
                long first = (long) HELD.getAcquire(this);
                if (first >= 0 && first >>> 32 < ChunkLayout.DATA_OFFSET + end) {
                    publishHeld(first); // the sender may store it too, or have: the same header
                    HELD.compareAndSet(this, first, -1L);
                } // else every header up to `end` is out already
                PUBLISHED.compareAndSet(this, from, end); // unless the sender published further meanwhile
            } else {
                // The sender copies from staging under this lock only: `published` cannot move meanwhile.
                publishRange(ChunkLayout.DATA_OFFSET + from, ChunkLayout.DATA_OFFSET + end, false);
                soPublished(end);
            }
        } catch (PeerFailedException e) {
            // The destination is gone: the sender is told when it next publishes or flushes.
        } finally {
            publicationLock.unlock();
        }
    }

    /**
     * Sender thread: where the unpublished appended records start, qualified by the chunk ({@code sealed << 32 |
     * published}, published read with acquire). Changes whenever anyone publishes them or the chunk changes.
     */
    public long batchStart() {
        return sealed << 32 | lvPublished();
    }

    /**
     * For another thread watching for a batch that stays unpublished: {@code published} qualified by the chunk of the
     * latest append ({@code chunk << 32 | published}) while appended records wait unpublished, -1 when none do.
     * Racy, a hint: the publication itself checks again.
     */
    public long unpublishedBatch() {
        long end = (long) APPENDED.getAcquire(this);
        long from = lvPublished();
        return (end & APPENDED_POSITION) > from ? (end & ~0xFFFF_FFFFL) | from : -1;
    }

    /**
     * Sends the flag of records whose publication waits for the next call, if any (see deferred publication). Any
     * thread; the sender thread's waits and flushes call it, and so does the node's flusher thread.
     */
    @Override
    public void publishDeferred() {
        if ((long) DEFERRED.getAcquire(this) < 0) {
            return;
        }
        publicationLock.lock();
        try {
            postDeferredFlag();
        } finally {
            publicationLock.unlock();
        }
    }

    /**
     * Flusher thread, every tick: sends a waiting range (a flag, or held calls) that has not moved since its previous
     * look (the sender went quiet). Skips a messenger whose sender is sealing a chunk right now; the seal sends it.
     *
     * @return true if a flag may still be waiting (look again next tick)
     */
    boolean publishIfStale() {
        if (closed) {
            return false;
        }
        long pending = (long) DEFERRED.getAcquire(this);
        if (pending < 0) {
            flusherSeen = -1;
            return false;
        }
        if (pending != flusherSeen) {
            flusherSeen = pending; // the sender moved it since the last look: it is still sending
            return true;
        }
        if (!publicationLock.tryLock()) {
            return true;
        }
        try {
            if (!closed) {
                postDeferredFlag();
            }
        } finally {
            publicationLock.unlock();
        }
        flusherSeen = -1;
        return false;
    }

    /** Holding publicationLock: sends the waiting range, if any, of the current chunk (no chunk switch meanwhile). */
    private void postDeferredFlag() {
        long pending = (long) DEFERRED.getAcquire(this);
        // Claim first (CAS): a range the sender has moved on from, or extended, stays the sender's to send.
        if (pending >= 0 && DEFERRED.compareAndSet(this, pending, -1L)) {
            long start = rangeStart(pending);
            try {
                flagTicket = (pending & UNSENT) != 0
                        // Held calls: their bytes, then the first flag in a later WRITE.
                        ? link.writePublished(staging, start, ring[current], start, rangeEnd(pending) - start)
                        // Idempotent: the staged flag byte itself, later than the records' WRITE (the sender's next WRITE
                        // would mark FOLLOWS on its own record instead).
                        : link.write(staging, start, ring[current], start, 1);
            } catch (PeerFailedException e) {
                // The destination is gone: its calls cannot arrive, and whoever waits on them is told by that wait.
            }
        }
    }

    private static long range(long start, long end, boolean unsent) {
        return start << 32 | end | (unsent ? UNSENT : 0);
    }

    private static long rangeStart(long range) {
        return (range & ~UNSENT) >>> 32;
    }

    private static long rangeEnd(long range) {
        return range & 0xFFFF_FFFFL;
    }

    /** The publication delay the flusher must keep for this messenger. */
    Duration publicationDelay() {
        return config.publicationDelay();
    }

    /** Bytes appended but not yet sent. Sender thread. */
    public long stagedBytes() {
        return position - lvPublished();
    }

    /**
     * Writes already-framed records (headers as in {@link ChunkLayout}) straight from {@code source} — an
     * aggregator's overflow buffer — into the current chunk, as many whole records as fit, moving to the next
     * chunk first if not even one fits. No copy: the bytes go from where they were serialized.
     *
     * @return bytes taken from the front of {@code [offset, offset + length)}; 0 if every chunk is full
     */
    public long writeFramed(LocalRegion source, long offset, long length) {
        if (ring.length == 0) {
            setUp();
        }
        publish(); // and any waiting flag: the framed batch comes from another region and cannot carry it
        if (currentSealed && !advance()) {
            return 0;
        }
        MemorySegment bytes = source.segment();
        long first = ChunkLayout.recordSize(ChunkLayout.length(bytes.get(ValueLayout.JAVA_INT_UNALIGNED, offset)));
        if (first > recordCapacity - position) {
            if (position == 0 || !advance()) {
                return 0;
            }
        }
        long take = 0;
        long records = 0;
        while (take < length) {
            long size = ChunkLayout.recordSize(ChunkLayout.length(bytes.get(ValueLayout.JAVA_INT_UNALIGNED, offset + take)));
            if (take + size > recordCapacity - position) {
                break;
            }
            take += size;
            records++;
        }
        RemoteRegion chunk = ring[current];
        // The first header lands after the rest of the batch: it publishes all of it.
        lastTicket = link.writePublished(source, offset, chunk, ChunkLayout.DATA_OFFSET + position, take);
        position += take;
        soPublished(position);
        recordsSent += records;
        return take;
    }

    /** The payload a record may have at data offset {@code position}: the chunk's rest, or the header's limit. */
    private long room(long position) {
        return Math.min(recordCapacity - position - ChunkLayout.RECORD_HEADER_LENGTH, ChunkLayout.MAX_RECORD_LENGTH);
    }

    /** The largest payload one record can carry (an empty chunk, or the header's limit). */
    public long maxPayload() {
        return config.maxPayload();
    }

    /** Bytes of one chunk that records may fill: the largest batch of framed records one write can carry. */
    public long chunkDataCapacity() {
        return recordCapacity;
    }

    /**
     * Counts the record being appended toward its batch's average size, and says whether it goes into the window:
     * decided when a batch starts, for the whole batch, from the previous batch's average record size (see
     * {@link #WINDOW_APPEND_MIN_RECORD}).
     */
    private boolean countAppendAndChooseWindow() {
        if (lvPublished() == position) {
            batchInWindow = appendsInWindow;
        }
        batchRecords++;
        return batchInWindow;
    }

    /**
     * Frames a record appended straight into the window (shared memory: the receiver's own chunk, so publishing it
     * later copies nothing). The batch's first header is its flag and stays zero in the chunk until a publication
     * stores it with release; a later header of the batch is stored with release too: the records before it may have
     * been published by another thread meanwhile (see the class doc), and then this header publishes its record.
     */
    private void appendedInWindow(long at, int header, long length) {
        if (at == ChunkLayout.DATA_OFFSET + lvPublished()) {
            HELD.setRelease(this, at << 32 | (header & 0xFFFF_FFFFL)); // after the record's bytes
        } else {
            ChunkLayout.HEADER.setRelease(window, at, header);
        }
        position += ChunkLayout.recordSize(length);
    }

    /** Frames the record the writer put at {@code at} (header with length and tag); it stays local until published. */
    private void stage(int tag, long at, long length) {
        stagingSegment.set(ValueLayout.JAVA_INT_UNALIGNED, at, ChunkLayout.header(length, tag));
        position += ChunkLayout.recordSize(length);
    }

    /**
     * Writes the staged records {@code [published, position)} of the current chunk (zero-copy: they were serialized
     * where they are sent from) and publishes them, or, if {@code defer}, leaves their flag waiting for the next call
     * (transports without a window). Without {@code defer} a flag already waiting goes out too.
     */
    private void publishStaged(boolean defer) {
        if (published == position) {
            if (!defer) {
                publishDeferred();
            }
            return;
        }
        if (window != null) {
            appendsInWindow = position - published >= (long) WINDOW_APPEND_MIN_RECORD * batchRecords;
            batchRecords = 0;
            if (batchInWindow) {
                // Appended into the window: release, so the batch's bytes become visible before its first header. If
                // another thread published the batch's start meanwhile, every header since is out already.
                link.checkAlive();
                long first = (long) HELD.getAcquire(this); // this thread's, or cleared by the other's publication
                if (first >= 0) {
                    publishHeld(first);
                    HELD.setRelease(this, -1L);
                }
                soPublished(position);
                return;
            }
        }
        publishRange(ChunkLayout.DATA_OFFSET + published, ChunkLayout.DATA_OFFSET + position, defer && window == null);
        soPublished(position);
    }

    /**
     * Writes staged bytes {@code [from, to)} of the current chunk, whose first byte is a record's flag, and publishes
     * them, or, if {@code defer}, sends them with that flag cleared, leaving it waiting. Held records go first, in
     * the same WRITE. Sender thread, the agent draining a RETRY_ASYNC queue under its channel's lock, or the agent publishing a
     * quiet sender's staged batch under {@code publicationLock} (model/messenger_staged.pml, APPENDS).
     */
    private void publishRange(long from, long to, boolean defer) {
        RemoteRegion chunk = ring[current];
        long waiting = (long) DEFERRED.getAcquire(this);
        if (waiting >= 0 && (waiting & UNSENT) != 0) {
            if (DEFERRED.compareAndSet(this, waiting, -1L)) {
                from = rangeStart(waiting); // held calls go first, in this WRITE (FOLLOWS was settled when held)
            } // else the flusher claimed them: it sends them, flag included, under publicationLock
        } else if (waiting >= 0) {
            // This thread posted the waiting records: this WRITE is later, so FOLLOWS on its first record publishes
            // them (ChunkLayout, rule 2) and their flag need not be sent. Staging at `from` is not posted yet.
            markFollows(from);
        }
        if (heldSinceFollows && (stagingSegment.get(ValueLayout.JAVA_BYTE, from) & ChunkLayout.FOLLOWS) != 0) {
            // FOLLOWS stands for every record before it, and the flusher may have claimed held records of ours and
            // not posted them yet. It claims and posts under publicationLock: once we held it, they are posted, and
            // this WRITE is later.
            publicationLock.lock();
            publicationLock.unlock();
            heldSinceFollows = false;
        }
        long ticket;
        if (defer) {
            ticket = link.writeFirstByteAs(staging, from, chunk, from, to - from,
                    (byte) (stagingSegment.get(ValueLayout.JAVA_BYTE, from) & ~ChunkLayout.VALID));
        } else {
            // The transport places the first header after the other bytes; the receiver loads it with acquire.
            ticket = link.writePublished(staging, from, chunk, from, to - from);
        }
        lastTicket = ticket;
        if (!defer) {
            // Release, after the posts above: nothing waits any more (a flusher that still claims the old flag-only
            // range re-sends an identical byte, later than these WRITEs).
            DEFERRED.setRelease(this, -1L);
            return;
        }
        // Whoever reads this range (acquire) and posts its flag posts it after the WRITE above. Volatile, not just
        // release: it pairs with the flusher's volatile "asleep" and its last look before parking (Dekker).
        DEFERRED.setVolatile(this, range(from, to, false));
        watchDeferred();
    }

    /** Sets FOLLOWS in the staged control byte at {@code at}, the first record of a WRITE not posted yet. */
    private void markFollows(long at) {
        byte control = stagingSegment.get(ValueLayout.JAVA_BYTE, at);
        stagingSegment.set(ValueLayout.JAVA_BYTE, at, (byte) (control | ChunkLayout.FOLLOWS));
    }

    /**
     * Coalescing: the link is backlogged, so the staged records {@code [published, position)} are not written now;
     * they join the waiting range as held, for the next call's WRITE (or the flusher) to send. Sender thread.
     */
    private void holdStaged() {
        long from = ChunkLayout.DATA_OFFSET + published;
        long to = ChunkLayout.DATA_OFFSET + position;
        heldSinceFollows = true;
        long waiting = (long) DEFERRED.getAcquire(this);
        // Extend a held range by CAS (volatile, as the stores below): if the flusher claimed it meanwhile, it may have
        // sent it already, so these records start a range of their own instead.
        if (waiting >= 0 && (waiting & UNSENT) != 0
                && DEFERRED.compareAndSet(this, waiting, range(rangeStart(waiting), to, true))) {
            soPublished(position);
            watchDeferred();
            return;
        }
        if (waiting >= 0 && (waiting & UNSENT) == 0) {
            // Records this thread posted wait for their flag: whoever posts this range posts it later, so FOLLOWS
            // publishes them (set first: the flusher may claim the range as soon as it is stored).
            markFollows(from);
        }
        DEFERRED.setVolatile(this, range(from, to, true)); // replaces a flag-only range: FOLLOWS stands for it
        soPublished(position);
        watchDeferred();
    }

    private void watchDeferred() {
        if (!watched) {
            watched = true;
            node.watchDeferred(this); // once per messenger: the flusher bounds how long a flag waits
        } else {
            node.wakeFlusherIfAsleep();
        }
    }

    /**
     * Leaves the current chunk for the next. The current chunk is sealed first (growing the ring when the next chunk
     * is still unconsumed and cMax allows), even if the move must wait: the receiver frees a chunk only once it is
     * sealed, so with a single chunk the seal is what lets it come back. Returns false, leaving the chunk sealed,
     * while the next chunk is not free yet.
     */
    private boolean advance() {
        publicationLock.lock(); // no flusher posts a waiting flag of this chunk once it is sealed
        try {
            return advanceLocked();
        } finally {
            publicationLock.unlock();
        }
    }

    private boolean advanceLocked() {
        if (!currentSealed) {
            publishStaged(true); // the chunk is sealed at `position`: everything before it must be out
            long consumed = consumedChunks();
            if (sealed + 1 - consumed >= ring.length && ring.length < config.cMax()) {
                grow(Math.min(config.c(), config.cMax() - ring.length));
            }
            // The seal goes where the next record would: after this chunk's last record, announcing the growth. Its
            // write carries a waiting flag along, and the seal's own flag is never deferred.
            long at = ChunkLayout.DATA_OFFSET + position;
            stagingSegment.set(ValueLayout.JAVA_INT_UNALIGNED, at, ChunkLayout.sealHeader(growthSinceSeal));
            publishRange(at, at + ChunkLayout.SEAL_LENGTH, false);
            sealed++;
            growthSinceSeal = 0;
            currentSealed = true;
        }
        // The sealed, unconsumed chunks end at the current one; the next is free iff fewer than the ring holds.
        if (sealed - consumedChunks() > ring.length - 1) {
            return false;
        }
        current = current + 1 == ring.length ? 0 : current + 1;
        window = link.directWindow(ring[current]);
        position = 0;
        soPublished(0);
        // Release: nothing is appended in the new chunk yet, so a watching thread stops seeing the old chunk's end.
        APPENDED.setRelease(this, sealed << 32);
        currentSealed = false;
        link.awaitCompletion(lastTicket); // staging is refilled from offset 0: earlier writes must have read it
        return true;
    }

    private long consumedChunks() {
        long pushed = CounterSlot.read(notifyRegion.segment(), notifyOffset + ChunkLayout.NOTIFY_CHUNKS_OFFSET,
                knownConsumed); // pushed by the receiver
        if (pushed > sealed) {
            throw new CorruptChunkException("destination thread " + Long.toHexString(destination) + " reports "
                    + pushed + " chunks consumed of only " + sealed + " sealed by thread " + Long.toHexString(sender));
        }
        knownConsumed = pushed;
        return pushed;
    }

    private void awaitSpace() {
        long start = System.nanoTime();
        long timeout = config.timeout().toNanos();
        idle.reset();
        while (!advance()) {
            link.checkAlive();
            if (System.nanoTime() - start > timeout) {
                throw new MessagingException("destination thread " + Long.toHexString(destination)
                        + " consumed nothing for " + config.timeout().toMillis() + " ms: all " + ring.length
                        + " chunks of " + config.chunkSize() + " bytes from thread " + Long.toHexString(sender)
                        + " are full (cMax " + config.cMax() + ")");
            }
            waitHelper.run();
            idle.idle();
        }
    }

    private void setUp() {
        RemoteRegion[] chunks = node.requestChunks(link, sender, destination, config.c(), config.chunkSize(),
                notifyRegion.remote(), notifyOffset, config.timeout());
        ring = chunks;
        window = link.directWindow(ring[current]);
    }

    private void grow(int count) {
        RemoteRegion[] added = node.requestChunks(link, sender, destination, count, config.chunkSize(),
                notifyRegion.remote(), notifyOffset, config.timeout());
        RemoteRegion[] grown = Arrays.copyOf(ring, ring.length + added.length);
        System.arraycopy(ring, current + 1, grown, current + 1 + added.length, ring.length - current - 1);
        System.arraycopy(added, 0, grown, current + 1, added.length);
        ring = grown;
        growthSinceSeal += added.length;
    }

    private static void checkTag(int tag) {
        int application = tag & ~ChunkLayout.TAG_NOTIFY;
        if (application < 0 || application > ChunkLayout.MAX_APPLICATION_TAG) {
            throw new IllegalArgumentException("record tag must be 0.." + ChunkLayout.MAX_APPLICATION_TAG
                    + ", optionally with TAG_NOTIFY, got " + tag);
        }
    }

    private MessagingException oversize() {
        return new MessagingException("call of more than " + maxPayload()
                + " bytes does not fit an empty chunk of " + config.chunkSize() + " bytes (messenger "
                + Long.toHexString(sender) + " -> " + Long.toHexString(destination) + "); raise chunkSize");
    }

    /**
     * Publishes a waiting flag (the last call is not dropped) and lets the staging writes finish, then frees staging.
     * A failed link only skips the waiting.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        try {
            if (ring.length != 0) {
                publishDeferred();
                link.awaitCompletion(Math.max(lastTicket, flagTicket)); // staging must not be freed under a write
            }
        } catch (RuntimeException e) {
            // the destination is gone or the link failed: nothing more to deliver
        }
        publicationLock.lock();
        try {
            closed = true; // volatile: the flusher skips a closed messenger; it posts only under this lock
            node.unwatchDeferred(this);
        } finally {
            publicationLock.unlock();
        }
        staging.close();
    }

    @Override
    public String toString() {
        return "Messenger[" + Long.toHexString(sender) + " -> " + Long.toHexString(destination) + ", chunks "
                + ring.length + ", sealed " + sealed + "]";
    }

}
