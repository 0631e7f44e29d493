package io.fabricrpc.messaging;

import io.fabricrpc.api.FullPolicy;
import io.fabricrpc.api.MessagingException;
import io.fabricrpc.api.MessengerConfig;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.transport.Link;
import org.agrona.concurrent.IdleStrategy;

import java.time.Duration;

/**
 * The sending half of a one-sided channel from one sender thread to one destination thread (Seriema's
 * {@code RDMAMessenger}): a {@link ChunkRing}, a {@link RecordAppender} and a {@link Publisher} chosen at set-up, with
 * the {@link FullPolicy} over the appender's result codes. {@link #send} frames and transmits; {@link #frame} only
 * frames (a layer above, or the agent for a quiet sender, transmits later). It extends RecordAppender for the layout
 * only (as JCTools builds its queues): a send reaches the window and position one dependent load sooner.
 *
 * <p>Invariant: every field here is the sender thread's; other threads touch only the publisher's transmit position,
 * by claims ({@link #transmitFromAnotherThread}). Per-sender FIFO: records are framed in order into one chunk at a
 * time, and transmitted in order by claims. Protocol: {@code package-info}; RETRY_ASYNC: {@link AsyncQueueChannel}.
 */
public final class Messenger extends RecordAppender implements RecordChannel {
    private final MessagingNode node;
    private final Link link;
    private final long sender;
    private final long destination;
    final MessengerConfig config; // ChannelCounters reads these four
    private final IdleStrategy idle;
    final ChunkRing ring;
    private final boolean defers;
    private final boolean coalesces;
    private final ChannelCounters counters;

    private static final int PLACE = -1;
    /** Sends between two looks at the poison word and the link, unless told to look (a poison seen, a link failed). */
    static final int LOOK_PERIOD = 64;

    // ---- sender thread ----
    private int callsUntilLook; // counts down to the next look at the poison word and link: 0, the first call looks
    private Publisher publisher; // chosen at set-up, from whether the transport maps the first chunk
    private boolean mayBePending; // records framed since this thread last saw nothing pending
    long recordsSent; // also the counters' "calls sent": ChannelCounters reads it opaque, nothing is added per call
    long ringFullEvents; // times sends found every chunk full, once per seal (slow path), for ChannelCounters
    private long sealedAtLastFull = -1; // refusals before the ring moves on are one event, however many tries
    private Runnable waitHelper = () -> { };
    private boolean watched;
    volatile boolean closed;

    Messenger(MessagingNode node, Link link, long sender, long destination, MessengerConfig config,
              LocalRegion notifyRegion, long notifyOffset) {
        if (config.fullPolicy() == FullPolicy.RETRY_ASYNC) {
            throw new IllegalArgumentException("RETRY_ASYNC is a channel over a FAIL messenger (MessagingNode.channel)");
        }
        super(node.transport().allocate(config.chunkSize(), RemoteAccess.NONE), config.chunkSize());
        this.node = node;
        this.link = link;
        this.sender = sender;
        this.destination = destination;
        this.config = config;
        this.idle = node.idleStrategy();
        this.ring = new ChunkRing(node, link, sender, destination, config, notifyRegion, notifyOffset);
        this.defers = !config.publicationDelay().isZero();
        this.coalesces = defers && config.coalescing();
        this.counters = new ChannelCounters(this);
    }

    /**
     * Sends one record with {@code tag} (0..{@link ChunkLayout#MAX_APPLICATION_TAG}, optionally | TAG_NOTIFY); its
     * sequence number is {@link #recordsSent()} right after. False only under FAIL with every chunk full; a
     * {@link MessagingException} if it cannot fit an empty chunk, no chunk frees within the timeout (RETRY) or allocation
     * fails; {@link ChannelPoisonedException} if the receiver dropped the channel; PeerFailedException if it is gone.
     */
    @Override
    public boolean send(int tag, RecordWriter writer) {
        RecordAppender.checkTag(tag);
        lookNowAndThen();
        try {
            setUpOnce();
            // The common case stays small enough to inline into the caller; full chunks do not.
            if (sendKnownInWindow(tag, writer) || sendOnce(tag, writer)) {
                recordsSent++;
                return true;
            }
            return whenFull(tag, writer, true);
        } catch (InternalError fault) { // HotSpot's SIGBUS: a mapped chunk's file was cut short under the store
            throw memoryFault(fault);
        }
    }

    private void setUpOnce() { if (publisher == null) { publisher = ring.setUp(this); } } // the first chunks, lazily

    /** The transport fails the link whose file is gone (PeerFailedException from here), or the fault is named. */
    private RuntimeException memoryFault(InternalError fault) {
        node.transport().memoryFault(fault);
        link.checkAlive();
        return new MessagingException("a store into the chunks of " + this + " faulted: " + fault, fault);
    }

    /** The commonest send, in place: known length, a mapped chunk with room and nothing pending; else false. */
    private boolean sendKnownInWindow(int tag, RecordWriter writer) {
        int length = writer.knownLength();
        if (length <= 0 || window == null || sealed || mayBePending || length > room()) {
            return false;
        }
        frameKnownAndStore(tag, writer, length); // the link: see lookNowAndThen
        soTransmit(gen << RecordAppender.GEN_SHIFT | position); // Publisher#soIdle
        return true;
    }

    /** Frames and transmits one record, moving to the next chunk if needed; false if every chunk is full. */
    private boolean sendOnce(int tag, RecordWriter writer) {
        if (sealed && !advance()) {
            return false;
        }
        if (window != null) {
            settle(); // records framed before go first
            link.checkAlive();
            if (!frameInChunk(tag, writer, RecordAppender.WINDOW_STORE)) {
                return false;
            }
            publisher.soIdle(gen, position); // appended stays behind: nothing to claim
            return true;
        }
        if (!frameInChunk(tag, writer, RecordAppender.STAGE)) {
            return false;
        }
        soAppended();
        if (coalesces && link.isBacklogged(publisher.lastTicket())) {
            mayBePending = true; // held: the next call's WRITE, or the agent, carries it
            watched = node.watchOrWake(this, watched);
            return true;
        }
        publisher.transmit(defers);
        if (defers) {
            watched = node.watchOrWake(this, watched); // the agent bounds how long the flag waits
        }
        return true;
    }

    /**
     * Frames one record, untransmitted (a transmit, send, seal or claim carries it later); FullPolicy when full. Looks at
     * the poison word and the link when a batch starts (nothing pending); each transmission looks at the link again.
     */
    public boolean frame(int tag, RecordWriter writer) {
        RecordAppender.checkTag(tag);
        int length = writer.knownLength();
        try {
            if (publisher != null && length > 0 && !sealed && length <= room()) {
                boolean starts = batchStarts();
                if (starts) {
                    lookBeforeABatch();
                }
                frameKnown(tag, writer, length, where(starts));
                soAppended();
                mayBePending = true;
                recordsSent++;
                return true;
            }
            lookBeforeABatch();
            setUpOnce();
            if (frameOnce(tag, writer)) {
                recordsSent++;
                return true;
            }
            return whenFull(tag, writer, false);
        } catch (InternalError fault) {
            throw memoryFault(fault);
        }
    }

    /** A fenced or failed peer, or a dropped channel, refuses a batch before its first record is framed. */
    private void lookBeforeABatch() { checkPoisoned(); link.checkAlive(); }

    private boolean frameOnce(int tag, RecordWriter writer) {
        if (sealed && !advance() || !frameInChunk(tag, writer, PLACE)) {
            return false;
        }
        soAppended();
        mayBePending = true;
        return true;
    }

    /** Nothing framed waits for transmission (the transmit position is idle at the append position). */
    private boolean batchStarts() { return lvTransmit() == Publisher.word(gen, position, false); }

    /** Where a frame-only record goes (staging, or the mapped chunk with its header held or stored). */
    private int where(boolean starts) { return window == null ? RecordAppender.STAGE : placement(starts); }

    /** Frames into the current chunk ({@code how}, or {@link #PLACE}), or the next one if needed; false if none free. */
    private boolean frameInChunk(int tag, RecordWriter writer, int how) {
        if (frame(tag, writer, how == PLACE ? where(batchStarts()) : how) == RecordAppender.APPENDED) {
            return true;
        }
        if (position != 0 && !advance()) {
            return false;
        }
        int framed = position != 0 ? RecordAppender.DOES_NOT_FIT
                : frame(tag, writer, how == PLACE ? where(batchStarts()) : how);
        if (framed != RecordAppender.APPENDED) {
            throw oversize(); // an empty chunk is too small for it
        }
        return true;
    }

    /** Every chunk up to cMax is full: what the policy says. */
    private boolean whenFull(int tag, RecordWriter writer, boolean transmit) {
        if (ring.sealed() != sealedAtLastFull) {
            sealedAtLastFull = ring.sealed();
            ringFullEvents++;
        }
        if (config.fullPolicy() == FullPolicy.FAIL) {
            return false;
        }
        ring.awaitSpace(this, publisher, idle, waitHelper, recordsSent);
        mayBePending = false;
        if (!(transmit ? sendOnce(tag, writer) : frameOnce(tag, writer))) {
            throw oversize();
        }
        recordsSent++;
        return true;
    }

    /**
     * Writes framed records from {@code source} (an aggregator's overflow buffer) into the current chunk, as many
     * whole ones as fit, moving to the next chunk first if none does. Returns the bytes taken; 0 if every chunk is full.
     */
    public long writeFramed(LocalRegion source, long offset, long length) {
        checkPoisoned();
        setUpOnce();
        transmit(); // and any waiting flag: the framed batch comes from another region and cannot carry it
        if (sealed && !advance()) {
            return 0;
        }
        long prefix = ChunkLayout.framedPrefix(source.segment(), offset, length, recordCapacity - position);
        if (prefix == 0) {
            if (position == 0 || !advance()) {
                return 0;
            }
            prefix = ChunkLayout.framedPrefix(source.segment(), offset, length, recordCapacity);
        }
        publisher.transmitFramed(source, offset, prefix >>> 32); // nothing is pending (above)
        recordsSent += prefix & 0xFFFF_FFFFL;
        return prefix >>> 32;
    }

    /** Transmits every record framed and not yet transmitted, and a waiting flag. Sender thread. */
    public void transmit() {
        if (publisher != null) {
            publisher.transmit(false);
            mayBePending = false;
        }
    }

    /** Over a mapped window: transmits what may be pending, so that a record framed now may publish itself. */
    private void settle() {
        if (mayBePending) {
            publisher.settle();
            mayBePending = false;
        }
    }

    /** Any thread: transmits what is pending by a claim, never waiting (a claim in progress transmits it anyway). */
    public boolean transmitFromAnotherThread() {
        Publisher p = publisher;
        return p != null && !closed && p.transmitIfPending();
    }

    /** Sender thread: the transmit position ({@code gen << 34 | offset}, flag bits included); moves with transmission. */
    public long transmitPosition() {
        return lvTransmit();
    }

    /** Sender thread: bytes framed into the current chunk and not transmitted, given {@link #transmitPosition()}. */
    public long framedBytes(long transmitPosition) {
        return Math.max(0, position - RecordAppender.offset(transmitPosition));
    }

    /** Any thread: the transmit position while records (or a flag) wait to go out over a live link, else -1; a hint. */
    public long pendingHint() {
        Publisher p = publisher;
        return p != null && p.pending() && link.isAlive() ? p.lvTransmit() : -1;
    }

    /** Agent thread, every tick: transmits what has not moved since its previous look. @return true to look again */
    boolean transmitIfStale() {
        Publisher p = publisher;
        return p != null && !closed && p.transmitIfStale();
    }

    /** Transmits records and a flag left waiting for the next call, if any. Any thread; waits call it. */
    @Override
    public void publishDeferred() { transmitFromAnotherThread(); }

    @Override
    public void flush() { transmit(); } // RecordChannel's flush: transmit what is pending

    /** Seals the current chunk (transmitting what is pending) and moves on if the next is free. */
    private boolean advance() {
        boolean moved = ring.advance(this, publisher, recordsSent);
        mayBePending = false;
        return moved;
    }

    /** Its own direct channel: callers keep one call site, which sees only messengers, for every kind of channel. */
    @Override
    public RecordChannel direct() { return this; }

    public long sender() { return sender; }

    @Override
    public long destination() { return destination; }

    public int chunkCount() { return ring.size(); } // chunks held in the receiver: c, growing to cMax

    /** Work the sender does while RETRY waits for space (running calls addressed to it: no mutual deadlock). */
    public void whileWaiting(Runnable helper) { this.waitHelper = helper; }

    public void helpWhileWaiting() { waitHelper.run(); }

    @Override
    public Link link() { return link; }

    @Override
    public long recordsSent() { return recordsSent; } // sent or framed so far: the sequence number of the latest one

    /** Handled by the receiver as of its latest push (TAG_NOTIFY records push). */
    @Override
    public long consumedRecords() { return ring.consumedRecords(); }

    @Override
    public void checkPoisoned() { // any thread: one local acquiring load, the receiver's poison word
        ring.checkOpen(this, recordsSent);
    }

    /** Looks at the poison and the link at the first send, every LOOK_PERIOD sends, and at all once told to. */
    private void lookNowAndThen() {
        if (--callsUntilLook < 0 || lpLookAlways()) {
            callsUntilLook = LOOK_PERIOD - 1;
            checkPoisoned();
            link.checkAlive();
        }
    }

    /** TAG_NOTIFY records whose handler threw, pushed before their consumed count. */
    @Override
    public long failedRecords() { return ring.failedRecords(); }

    @Override
    public String latestFailure() { return ring.latestFailure(); }

    /** The ticket of the latest write for this messenger, by any claimant ({@link Link#isComplete}). */
    @Override
    public long lastTicket() {
        Publisher p = publisher; // one read: other threads call this
        return p == null ? 0 : p.lastTicket();
    }

    /** This channel's counters (calls and bytes sent, chunks, ring full, RETRY waits, RETRY_ASYNC hook). */
    public ChannelCounters counters() { return counters; }

    public FullPolicy fullPolicy() { return config.fullPolicy(); }

    /** How long a wait for room (RETRY, a flush) may last before it fails. */
    public Duration timeout() { return config.timeout(); }

    @Override
    public long bufferedBytes() { // framed but not transmitted, records whose flag waits included
        Publisher p = publisher; // one read: other threads call this
        return p == null ? 0 : p.pendingBytes();
    }

    public long maxPayload() { return ChunkLayout.maxPayload(config.chunkSize()); } // what one record can carry: an empty chunk, or the header's limit

    public MessagingException oversize() { // a call too large for any chunk: names the sizes and the setting to raise
        return new MessagingException("call of more than " + maxPayload() + " bytes does not fit an empty chunk of "
                + config.chunkSize() + " bytes (" + this + "); raise MessengerConfig.chunkSize (FabricConfig.withMessenger)");
    }

    /** Transmits what is pending, lets every write finish, frees staging; the transmit position stays claimed. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true; // volatile: other threads stop transmitting for it
        if (publisher != null) {
            publisher.transmitAndKeepClaim();
        }
        node.unwatchDeferred(this);
        staging.close();
    }

    @Override
    public String toString() {
        return "Messenger[" + ThreadNames.of(sender) + " -> " + ThreadNames.of(destination) + ", chunks "
                + ring.size() + ", sealed " + ring.sealed() + "]";
    }
}
