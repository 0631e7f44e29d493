package io.fabricrpc.messaging;

import io.fabricrpc.api.MessagingException;
import io.fabricrpc.api.MessengerConfig;

import io.fabricrpc.transport.CounterSlot;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;

import org.agrona.concurrent.IdleStrategy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * A messenger's ring of remote chunks in the receiver ({@link ChunkLayout}): obtained on first use, grown up to
 * {@code cMax} right after the current chunk, left by a seal (transmitted with what is pending, by the sender's
 * claim), reused once the receiver pushes it back as consumed and every write from staging has completed.
 *
 * <p>Invariant: with {@code sealed} chunks sealed and {@code consumed} pushed back (consumed ≤ sealed), the sealed but
 * unconsumed chunks are the ones just before the current one, so the next chunk is free iff
 * {@code sealed - consumed < size - 1} once the current one is sealed. Owner (sending) thread only; the consumed
 * count is read from the notification slot the receiver writes.
 */
final class ChunkRing {
    private static final VarHandle BYTES_BEFORE = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle COUNTS;

    static {
        try {
            COUNTS = MethodHandles.lookup().findVarHandle(ChunkRing.class, "retryWaits", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final MessagingNode node;
    private final Link link;
    private final long sender;
    private final long destination;
    private final MessengerConfig config;
    private final LocalRegion notifyRegion;
    private final long notifyOffset;

    // ---- owner thread ----
    private RemoteRegion[] chunks = new RemoteRegion[0];
    private int current;
    /** The current chunk mapped into this process (shared memory), or null. */
    private MemorySegment window;
    private long sealed;
    private long knownConsumed;
    private long knownConsumedRecords;
    private long knownFailedRecords;
    /** The first byte of the poison word in the notification slot: 0 while the receiver keeps the channel. */
    final MemorySegment poisonWord;
    private int growthSinceSeal;
    /** Records framed into chunks before the current one: the current chunk's first record number. */
    private long recordsBeforeChunk;
    /** The sequence words of the chunk being sealed, written from here (inline: no registered source needed). */
    private final MemorySegment sequence = java.lang.foreign.Arena.ofAuto().allocate(ChunkLayout.SEQUENCE_LENGTH, 8);
    // Counters (owner thread writes, the counters publisher reads): slow paths only, once per chunk or per wait.
    private long retryWaits;
    private volatile int chunkCount;
    /** Bytes framed into generations before g, at [g & 1]: written (release) before generation g starts. */
    private final long[] bytesBefore = new long[2];

    ChunkRing(MessagingNode node, Link link, long sender, long destination, MessengerConfig config,
              LocalRegion notifyRegion, long notifyOffset) {
        this.node = node;
        this.link = link;
        this.sender = sender;
        this.destination = destination;
        this.config = config;
        this.notifyRegion = notifyRegion;
        this.notifyOffset = notifyOffset;
        this.poisonWord = notifyRegion.segment().asSlice(notifyOffset + ChunkLayout.NOTIFY_POISON_OFFSET, 1);
    }

    /**
     * Obtains the first {@code c} chunks (a no-setup service call to the receiving process) and starts generation 0.
     *
     * @return the publisher the transport calls for: a mapped chunk's, or staged WRITEs'
     */
    Publisher setUp(RecordAppender appender) {
        chunks = request(config.c());
        chunkCount = chunks.length;
        window = link.directWindow(chunks[current]);
        appender.reset(0, chunks[current], window);
        Publisher publisher = window != null ? new WindowPublisher(link, appender) : new StagedPublisher(link, appender);
        link.whenFailed(appender::casLookAlways); // every send looks once it failed; in place, only then
        appender.soAppended();
        return publisher;
    }

    /**
     * Leaves the current chunk: seals it first, with whatever is pending, even if the move must wait (the receiver
     * frees a chunk only once it is sealed). Returns false, leaving the chunk sealed, while the next is not free.
     * {@code records}: records framed so far, all of them in this chunk or before it.
     */
    boolean advance(RecordAppender appender, Publisher publisher, long records) {
        if (!appender.sealed) {
            int growth = growthForSeal();
            sequence.set(ValueLayout.JAVA_LONG_UNALIGNED, ChunkLayout.SEQUENCE_FIRST_OFFSET, recordsBeforeChunk);
            sequence.set(ValueLayout.JAVA_LONG_UNALIGNED, ChunkLayout.SEQUENCE_COUNT_OFFSET, records - recordsBeforeChunk);
            // Posted before the seal's write (or stored before its release): the receiver reads it after the seal.
            link.writePublishedInline(sequence, 0, chunks[current], 0, ChunkLayout.SEQUENCE_LENGTH);
            recordsBeforeChunk = records;
            if (window == null) {
                appender.frameSeal(growth, RecordAppender.STAGE);
                appender.soAppended();
                publisher.transmit(false); // pending records, a waiting flag (FOLLOWS) and the seal: one WRITE
            } else {
                publisher.settle();
                appender.frameSeal(growth, RecordAppender.WINDOW_STORE);
                publisher.soIdle(appender.gen, appender.position);
                appender.soAppended();
            }
            sealed++;
            BYTES_BEFORE.setRelease(bytesBefore, (int) (sealed & 1),
                    bytesBefore[(int) ((sealed - 1) & 1)] + appender.position); // before T names generation `sealed`
            growthSinceSeal = 0;
            appender.sealed = true;
        }
        if (sealed - consumedChunks() > chunks.length - 1) {
            return false;
        }
        current = current + 1 == chunks.length ? 0 : current + 1;
        window = link.directWindow(chunks[current]);
        link.awaitCompletion(publisher.lastTicket()); // staging is refilled from offset 0: every write has read it
        appender.reset(sealed, chunks[current], window);
        publisher.soIdle(sealed, 0); // before appended: see Publisher#soIdle
        appender.soAppended();
        return true;
    }

    /** RETRY: advances, waiting for the receiver to free a chunk (bounded by the timeout), running {@code helper}. */
    void awaitSpace(RecordAppender appender, Publisher publisher, IdleStrategy idle, Runnable helper, long records) {
        long start = System.nanoTime();
        long timeout = config.timeout().toNanos();
        MessagingEvents.RingFull event = new MessagingEvents.RingFull(); // slow path only: a wait for room
        retryWaits++;
        event.begin();
        idle.reset();
        while (!advance(appender, publisher, records)) {
            link.checkAlive();
            checkOpen(appender, records);
            if (System.nanoTime() - start > timeout) {
                commit(event, true);
                throw new MessagingException("destination thread " + ThreadNames.of(destination)
                        + " consumed nothing for " + config.timeout().toMillis() + " ms: all " + chunks.length
                        + " chunks of " + config.chunkSize() + " bytes from thread " + ThreadNames.of(sender)
                        + " are full (cMax " + config.cMax() + ")");
            }
            helper.run();
            idle.idle();
        }
        commit(event, false);
    }

    private void commit(MessagingEvents.RingFull event, boolean timedOut) {
        if (event.shouldCommit()) {
            event.sender = ThreadNames.of(sender);
            event.destination = ThreadNames.of(destination);
            event.chunks = chunks.length;
            event.timedOut = timedOut;
            event.commit();
        }
    }

    int size() {
        return chunks.length;
    }

    /** Any thread: chunks held in the receiver (a volatile written only when the ring grows). */
    int lvChunkCount() {
        return chunkCount;
    }

    /** Any thread: RETRY waits so far, by an opaque load of the owner's plain count. */
    long loRetryWaits() {
        return (long) COUNTS.getOpaque(this);
    }

    /**
     * Any thread: bytes framed into generations before {@code gen} (acquire). Valid while the transmit word still
     * names {@code gen} when read after this (the slot is rewritten only once a later generation has started).
     */
    long lvBytesBefore(long gen) {
        return (long) BYTES_BEFORE.getAcquire(bytesBefore, (int) (gen & 1));
    }

    RemoteRegion current() {
        return chunks[current];
    }

    /** The current chunk as mapped memory (shared memory), or null when records go through staging. */
    MemorySegment window() {
        return window;
    }

    /** Chunks sealed so far: the generation of the current chunk. */
    long sealed() {
        return sealed;
    }

    /** Before a seal: grows the ring when the next chunk is still unconsumed and cMax allows; the seal's growth. */
    private int growthForSeal() {
        if (sealed + 1 - consumedChunks() >= chunks.length && chunks.length < config.cMax()) {
            RemoteRegion[] added = request(Math.min(config.c(), config.cMax() - chunks.length));
            RemoteRegion[] grown = Arrays.copyOf(chunks, chunks.length + added.length);
            System.arraycopy(chunks, current + 1, grown, current + 1 + added.length, chunks.length - current - 1);
            System.arraycopy(added, 0, grown, current + 1, added.length);
            chunks = grown;
            chunkCount = grown.length;
            growthSinceSeal += added.length;
            MessagingEvents.ChunkGrowth event = new MessagingEvents.ChunkGrowth();
            if (event.shouldCommit()) {
                event.sender = ThreadNames.of(sender);
                event.destination = ThreadNames.of(destination);
                event.added = added.length;
                event.chunks = chunks.length;
                event.cMax = config.cMax();
                event.commit();
            }
        }
        return growthSinceSeal;
    }

    private long consumedChunks() {
        long pushed = CounterSlot.read(notifyRegion.segment(), notifyOffset + ChunkLayout.NOTIFY_CHUNKS_OFFSET,
                knownConsumed); // pushed by the receiver
        if (pushed > sealed) {
            throw new CorruptChunkException("destination thread " + ThreadNames.of(destination) + " reports "
                    + pushed + " chunks consumed of only " + sealed + " sealed by thread " + ThreadNames.of(sender));
        }
        knownConsumed = pushed;
        return pushed;
    }

    /**
     * Any thread: throws if the receiver dropped the channel ({@link ChannelNotices}); {@code records}: accepted so
     * far. A look that sees it says so to {@code appender} ({@link RecordAppender#casLookAlways}).
     */
    void checkOpen(RecordAppender appender, long records) {
        if (poisoned()) {
            appender.casLookAlways();
            throw poisoned(records);
        }
    }

    /** Any thread: whether the receiver dropped the channel (an acquiring load of the poison word's code byte). */
    boolean poisoned() {
        return ChannelNotices.reasonCode(poisonWord) != 0;
    }

    ChannelPoisonedException poisoned(long records) {
        return ChannelNotices.poisoned(notifyRegion.segment(), notifyOffset, sender, destination, records);
    }

    /** Notifying records whose handler threw, as of the receiver's latest push (pushed before their consumption). */
    long failedRecords() {
        knownFailedRecords = ChannelNotices.failures(notifyRegion.segment(), notifyOffset, knownFailedRecords);
        return knownFailedRecords;
    }

    String latestFailure() {
        return ChannelNotices.latestFailure(notifyRegion.segment(), notifyOffset);
    }

    /** Records the receiver has handled, as of its latest push (only records tagged TAG_NOTIFY push). */
    long consumedRecords() {
        // A racing reader on another thread may store an older sound value: the next read makes up for it.
        long read = CounterSlot.read(notifyRegion.segment(), notifyOffset + ChunkLayout.NOTIFY_RECORDS_OFFSET,
                knownConsumedRecords); // pushed by the receiver
        knownConsumedRecords = read;
        return read;
    }

    private RemoteRegion[] request(int count) {
        return node.requestChunks(link, sender, destination, count, config.chunkSize(), notifyRegion.remote(),
                notifyOffset, config.timeout());
    }
}
