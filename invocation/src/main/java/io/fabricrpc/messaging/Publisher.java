package io.fabricrpc.messaging;

import io.fabricrpc.transport.Link;
import io.fabricrpc.api.PeerFailedException;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Transmits what the {@link RecordAppender} framed, through one word: the transmit position
 * ({@code gen << 34 | FLAG? | BUSY? | offset}), stored next to the appender's fields so a send reads one object. Chosen once per messenger: {@link WindowPublisher} (a mapped chunk)
 * or {@link StagedPublisher} (link WRITEs).
 *
 * <p>Invariant: {@code transmit} is monotonic and changes only by a CAS that sets BUSY (a claim: the claimant alone
 * transmits {@code [offset, appended)} and then stores the new position with release), or by the owner's release
 * store when it saw nothing pending ({@link #soIdle}). So whoever claims, the owner or the agent of a quiet
 * owner, no range is transmitted twice, claims are posted in claim order, and the owner leaves a chunk only after its
 * own seal claim. Tickets: the owner's in {@code lastTicket}, other claimants' in {@code helperTicket}, a maximum
 * advanced by CAS. Protocol and its model: {@code package-info}, {@code model/messenger_transmit_*.pml}.
 */
abstract sealed class Publisher permits WindowPublisher, StagedPublisher {
    static final long BUSY = 1L << 32;
    /** The VALID bit of the record at {@code flagAt} has not been sent (deferred publication, staged only). */
    static final long FLAG = 1L << 33;
    private static final long SPIN_BEFORE_YIELD = 100;

    private static final VarHandle HELPER_TICKET;

    static {
        try {
            HELPER_TICKET = MethodHandles.lookup().findVarHandle(Publisher.class, "helperTicket", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final Link link;
    final RecordAppender appender;

    /** The largest ticket a claimant other than the owner posted; a maximum advanced by CAS. */
    @SuppressWarnings("unused") // through HELPER_TICKET
    private long helperTicket;

    // ---- owner thread ----
    long lastTicket;

    // ---- agent thread: the pending state at its previous look ----
    private long agentSeenTransmit = -1;
    private long agentSeenAppended = -1;

    Publisher(Link link, RecordAppender appender) {
        this.link = link;
        this.appender = appender;
    }

    /**
     * Transmits the claimed range {@code [offset(claimed), offset(appendedWord))} of generation {@code gen(claimed)}.
     *
     * @param defer leave the first record's flag waiting (staged, owner only)
     * @param owner whether the owner claims (else another thread acting for a quiet owner)
     * @return the transmit position to store when the claim ends (no BUSY)
     */
    abstract long transmitClaimed(long claimed, long appendedWord, boolean defer, boolean owner);

    /**
     * Owner: transmits everything framed (and a waiting flag, unless {@code defer}), claiming first. A fenced or failed
     * link throws {@link PeerFailedException} first: nothing framed after a verdict leaves, even into a mapped chunk.
     */
    final void transmit(boolean defer) {
        link.checkAlive();
        long claimed = claim();
        long next = claimed;
        try {
            next = transmitClaimed(claimed, appender.lvAppended(), defer, true);
        } finally {
            soTransmit(next); // release: ends the claim
        }
    }

    /**
     * Owner, nothing pending: writes framed records from {@code source} to the append position (the first header
     * placed last publishes them all) and moves both positions past them.
     */
    final void transmitFramed(io.fabricrpc.api.LocalRegion source, long offset, long bytes) {
        posted(link.writePublished(source, offset, appender.chunk, ChunkLayout.DATA_OFFSET + appender.position, bytes),
                true);
        appender.framedElsewhere(bytes);
        soIdle(appender.gen, appender.position);
        appender.soAppended();
    }

    /**
     * Owner, closing: claims for good (nothing is transmitted after this), transmits what is pending and lets every
     * write finish, so that staging may be freed. A failed link only skips the waiting.
     */
    final void transmitAndKeepClaim() {
        try {
            long claimed = claim();
            if (link.isAlive()) { // a fenced peer gets nothing framed after the verdict
                transmitClaimed(claimed, appender.lvAppended(), false, true);
            }
            link.awaitCompletion(lastTicket());
        } catch (RuntimeException e) {
            // the destination is gone or the link failed: nothing more to deliver
        }
    }

    /** Owner: transmits what may be pending (a frame-only batch the agent may or may not have transmitted). */
    final void settle() {
        if (!idle()) {
            transmit(false);
        }
    }

    /**
     * Owner: claims the transmit position, waiting while another thread's claim (a short post) is in progress.
     * Bounded: a claimant that never ends its claim is a bug, reported rather than waited for.
     */
    final long claim() {
        long start = 0;
        for (long spins = 0; ; spins++) {
            long v = lvTransmit();
            if ((v & BUSY) == 0 && appender.casTransmit(v, v | BUSY)) {
                return v;
            }
            if (spins < SPIN_BEFORE_YIELD) {
                Thread.onSpinWait();
            } else if (spins < 2 * SPIN_BEFORE_YIELD) {
                Thread.yield();
            } else {
                // The claimant lost its CPU mid-post: give it ours (2 vCPUs) rather than spin against it.
                start = start == 0 ? System.nanoTime() : start;
                if (System.nanoTime() - start > 10_000_000_000L) {
                    throw new IllegalStateException("transmit position " + Long.toHexString(v)
                            + " claimed by another thread for over 10 s");
                }
                java.util.concurrent.locks.LockSupport.parkNanos(Math.min(50_000L, 1_000L << Math.min(6, spins - 2 * SPIN_BEFORE_YIELD)));
            }
        }
    }

    /**
     * Any thread: transmits what is pending (records framed and a waiting flag), if nobody else is transmitting. Never
     * waits. A fenced or failed link transmits nothing: it is left to the owner, who learns it at its next call.
     *
     * @return true if something was pending and this thread transmitted it
     */
    final boolean transmitIfPending() {
        long appendedWord = appender.lvAppended(); // before the transmit word: see soIdle
        long v = lvTransmit();
        if (!isPending(v, appendedWord) || !link.isAlive() || !appender.casTransmit(v, v | BUSY)) {
            return false;
        }
        long next = v;
        try {
            next = transmitClaimed(v, appendedWord, false, false);
        } catch (PeerFailedException e) {
            // the destination is gone: its calls cannot arrive, and whoever waits on them is told by that wait
        } finally {
            soTransmit(next);
        }
        return true;
    }

    /**
     * Agent thread, every tick: transmits what has been pending since its previous look (the owner went quiet).
     *
     * @return true while something may still be pending (look again next tick)
     */
    final boolean transmitIfStale() {
        long appendedWord = appender.lvAppended();
        long v = lvTransmit();
        if (!isPending(v, appendedWord) || !link.isAlive()) { // a dead link's owner learns it at its next call
            agentSeenTransmit = -1;
            return (v & BUSY) != 0;
        }
        if (v != agentSeenTransmit || appendedWord != agentSeenAppended) {
            agentSeenTransmit = v; // the owner moved since the last look: it is still sending
            agentSeenAppended = appendedWord;
            return true;
        }
        agentSeenTransmit = -1;
        return !transmitIfPending() && isPending(lvTransmit(), appender.lvAppended());
    }

    private static boolean isPending(long v, long appendedWord) {
        return (v & BUSY) == 0 && RecordAppender.gen(v) == RecordAppender.gen(appendedWord)
                && (RecordAppender.offset(v) < RecordAppender.offset(appendedWord) || (v & FLAG) != 0);
    }

    /** Any thread: whether records framed (or a flag) wait for transmission; a hint for watchers. */
    final boolean pending() {
        long appendedWord = appender.lvAppended();
        long v = lvTransmit();
        return (v & BUSY) != 0 || isPending(v, appendedWord);
    }

    /**
     * Owner, having seen nothing pending (no claim, no flag, transmitted up to the append position): moves the
     * transmit position to {@code gen, position} with a release store, before any {@link RecordAppender#soAppended}
     * it makes. No claim can race it: a claimant reads {@code appended} before {@code transmit} and claims only when
     * {@code appended} is ahead, so it never finds a gap across this store; a direct send into a mapped chunk leaves
     * {@code appended} behind (the next frame-only record stores it).
     */
    final void soIdle(long gen, long position) {
        soTransmit(gen << RecordAppender.GEN_SHIFT | position);
    }

    /** Owner: whether nothing is pending: transmitted up to the append position of the current chunk, no flag. */
    final boolean idle() {
        return lvTransmit() == (appender.gen << RecordAppender.GEN_SHIFT | appender.position);
    }

    /** Bytes framed but not transmitted, the records whose flag waits included. Any thread (a hint off the owner). */
    long pendingBytes() {
        long v = lvTransmit();
        long appendedWord = appender.lvAppended();
        if (RecordAppender.gen(v) != RecordAppender.gen(appendedWord)) {
            return 0;
        }
        return Math.max(0, RecordAppender.offset(appendedWord) - RecordAppender.offset(v));
    }

    /** The latest ticket of every write posted for this messenger, by the owner or another claimant. */
    final long lastTicket() {
        return Math.max(lastTicket, (long) HELPER_TICKET.getAcquire(this));
    }

    /** Records the ticket of a post ({@code owner}: the owner's; else advances the helpers' maximum by CAS). */
    final void posted(long ticket, boolean owner) {
        if (owner) {
            lastTicket = ticket;
            return;
        }
        long seen;
        do {
            seen = (long) HELPER_TICKET.getAcquire(this);
        } while (seen < ticket && !HELPER_TICKET.compareAndSet(this, seen, ticket));
    }

    final long lvTransmit() {
        return appender.lvTransmit();
    }

    private void soTransmit(long value) {
        appender.soTransmit(value);
    }

    static long word(long gen, long offset, boolean flag) {
        return gen << RecordAppender.GEN_SHIFT | (flag ? FLAG : 0) | offset;
    }
}
