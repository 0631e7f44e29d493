package io.fabricrpc.transport;

import io.fabricrpc.api.TransportException;

import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;

import java.lang.foreign.MemorySegment;

/**
 * A connection from this endpoint to one peer endpoint (one RC queue pair's worth of ordering under RDMA).
 * Shared by the threads of a process; every method is thread-safe. Ordering guarantees are stated in the
 * {@linkplain io.fabricrpc.transport package documentation}.
 *
 * <p>Every data operation returns a completion ticket: a positive, per-link increasing number. The ticket
 * completes when the source range may be reused (writes) or the destination holds the data (reads).
 * Transports that complete synchronously return tickets that are already complete.
 */
public interface Link {
    /** The peer's endpoint id (as in {@link RemoteRegion#ownerId()}). */
    long peerId();

    EndpointAddress peerAddress();

    /**
     * One-sided write of {@code length} bytes from {@code src} at {@code srcOffset} into the peer's region
     * {@code dst} at {@code dstOffset}.
     *
     * @throws TransportException if a range is outside its region or {@code dst} does not allow writes
     * @throws PeerFailedException if the peer has failed
     */
    long write(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length);

    /**
     * One-sided write of an 8-byte value at an 8-byte-aligned {@code dstOffset}, ordered after every earlier write of
     * the calling thread on this link; the peer reads it with an acquiring load. Needs no source region. <b>Not
     * tear-free:</b> an RDMA responder may place the 8 bytes one by one (Soft-RoCE does), so while it lands a reader
     * may see old and new bytes mixed. A reader may therefore only wait for an exact new value (a mix equals it only
     * once every changed byte has landed), as the mailbox's inbox bit and the return slot's sequence do; a monotonic
     * counter read with {@code >=} must be published through a {@link CounterSlot} instead.
     */
    long writeLong(RemoteRegion dst, long dstOffset, long value);

    /**
     * {@link #write} of the bytes, then {@link #writeLong} of a flag in the same region, ordered after them: the
     * publication step of every protocol here (a packet and its inbox word, records and their producer word). One
     * call, so a transport can check and resolve the region once and post both operations together.
     *
     * @return the ticket of the flag write (it completes after the bytes' write)
     */
    default long writeAndFlag(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length,
                              long flagOffset, long flagValue) {
        write(src, srcOffset, dst, dstOffset, length);
        return writeLong(dst, flagOffset, flagValue);
    }

    /**
     * Writes {@code length} (≥ 1) bytes like {@link #write}, placing the first byte, at a 4-byte-aligned
     * {@code dstOffset}, after all the others and as a single-byte write: a peer that sees that byte non-zero with an
     * acquiring load sees the whole range. This publishes records whose header is their own flag (a ring whose free
     * space is zero), with no separate flag word. A single byte because nothing wider is safe: an RDMA responder may
     * copy a 4- or 8-byte WRITE byte by byte (Soft-RoCE does). The default writes the rest, then the first byte.
     *
     * @return the ticket of the first byte's write (it completes after the rest)
     * @throws TransportException as {@link #write}, or if {@code dstOffset} is unaligned or {@code length < 1}
     */
    default long writePublished(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length) {
        checkPublishable(dst, dstOffset, length);
        if (length > 1) {
            write(src, srcOffset + 1, dst, dstOffset + 1, length - 1);
        }
        return write(src, srcOffset, dst, dstOffset, 1); // issue order: the first byte lands last
    }

    /**
     * Writes {@code length} (≥ 2) bytes like {@link #write}, except the first, at a 4-byte-aligned {@code dstOffset},
     * which lands as {@code first} whatever {@code src} holds there. One write as far as ordering goes: under RDMA one
     * WRITE gathering a byte of the transport's own and the rest from {@code src}. A messenger sends records this way
     * with their flag cleared, keeping the flag in {@code src} for a later 1-byte write (see {@code Messenger}'s
     * deferred publication). The default writes the rest, then the byte through {@link #writePublishedInline}.
     *
     * @return the ticket of the (last) write
     * @throws TransportException as {@link #write}, or if {@code dstOffset} is unaligned or {@code length < 2}
     */
    default long writeFirstByteAs(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length,
                                  byte first) {
        checkFirstByteAs(dst, dstOffset, length);
        write(src, srcOffset + 1, dst, dstOffset + 1, length - 1);
        return writePublishedInline(BYTE_VALUES, first & 0xFF, dst, dstOffset, 1);
    }

    /** Every byte value at its own offset (read-only): a source for single bytes that allocates nothing. */
    MemorySegment BYTE_VALUES = byteValues();

    private static MemorySegment byteValues() {
        byte[] values = new byte[256];
        for (int i = 0; i < values.length; i++) {
            values[i] = (byte) i;
        }
        return MemorySegment.ofArray(values).asReadOnly();
    }

    /**
     * The argument check every {@link #writeFirstByteAs} makes.
     *
     * @throws TransportException unless {@code dstOffset} is 4-byte aligned and {@code length >= 2}
     */
    static void checkFirstByteAs(RemoteRegion dst, long dstOffset, long length) {
        if ((dstOffset & 3) != 0 || length < 2) {
            throw new TransportException("writeFirstByteAs needs a 4-byte-aligned offset and at least 2 bytes, got"
                    + " offset " + dstOffset + ", length " + length + " of " + dst);
        }
    }

    /**
     * {@link #writePublished} of at most {@link #MAX_INLINE_LENGTH} bytes taken from {@code src} during the call
     * (RDMA's inline send): {@code src} may be any memory, heap included, and may be changed as soon as this returns.
     * Small control words are published this way ({@link CounterSlot}) with no registered source of their own.
     *
     * @return the ticket of the first byte's write
     * @throws TransportException as {@link #writePublished}, or if {@code length > MAX_INLINE_LENGTH}
     */
    long writePublishedInline(MemorySegment src, long srcOffset, RemoteRegion dst, long dstOffset, int length);

    /** The largest {@link #writePublishedInline}. */
    int MAX_INLINE_LENGTH = 32;

    /**
     * The argument check every {@link #writePublishedInline} makes, besides {@link #checkPublishable}.
     *
     * @throws TransportException if {@code length > MAX_INLINE_LENGTH}
     */
    static void checkInline(RemoteRegion dst, long dstOffset, int length) {
        checkPublishable(dst, dstOffset, length);
        if (length > MAX_INLINE_LENGTH) {
            throw new TransportException("writePublishedInline takes at most " + MAX_INLINE_LENGTH + " bytes, got "
                    + length + " for offset " + dstOffset + " of " + dst);
        }
    }

    /**
     * The argument check every {@link #writePublished} makes.
     *
     * @throws TransportException if {@code dstOffset} is not 4-byte aligned or {@code length < 1}
     */
    static void checkPublishable(RemoteRegion dst, long dstOffset, long length) {
        if ((dstOffset & 3) != 0 || length < 1) {
            throw new TransportException("writePublished needs a 4-byte-aligned offset and at least 1 byte, got offset "
                    + dstOffset + ", " + length + " bytes, to " + dst);
        }
    }

    /**
     * The peer's region mapped into this process, when the transport maps peer memory (shared memory), so that a
     * writer can serialize straight into it instead of into a source region first; {@code null} otherwise (RDMA).
     * Stores into the window follow the rules of {@link #writePublished}: plain stores of the bytes, then a release
     * store of the 4-byte header that publishes them. Checks the region once, here; the caller keeps to its bounds.
     * The window is {@linkplain LocalRegion#isPlainNative plain native}.
     *
     * @throws TransportException if the region is not the peer's or does not allow writes
     */
    default java.lang.foreign.MemorySegment directWindow(RemoteRegion region) {
        return null;
    }

    /**
     * Runs {@code hook} when this link stops being alive (it failed, was fenced or closed, or its endpoint closed or
     * faulted): on the thread that ended it, or at once on this one if it already has. A sender storing into a
     * {@link #directWindow} looks at the link only when its hook tells it to, so a link that hands out windows must
     * run the hooks. A hook may run more than once; it must be quick and must not throw. Others may ignore it.
     */
    default void whenFailed(Runnable hook) {
    }

    /**
     * One-sided read of {@code length} bytes of the peer's region {@code src} into {@code dst}. The data is
     * there once the returned ticket {@linkplain #isComplete completes} (see {@link #awaitCompletion}).
     */
    long read(RemoteRegion src, long srcOffset, LocalRegion dst, long dstOffset, long length);

    /**
     * Two-sided message of up to {@link Transport#maxMessageSize()} bytes into the peer's message queue, tagged
     * with {@code type} (> 0). Needs no prior negotiation; the peer receives it from
     * {@link Transport#pollMessages}. Messages from one thread on one link arrive in order.
     *
     * @return false if the peer's queue is full right now (retry later); never drops silently
     * @throws IllegalArgumentException if the message is larger than {@link Transport#maxMessageSize()}
     */
    boolean send(int type, MemorySegment payload, long offset, int length);

    /**
     * True once the operation with this ticket has completed. Tickets of a link complete in order: once one has, every
     * earlier ticket of the link has too, whichever thread took it (senders reuse a buffer after its latest ticket).
     */
    boolean isComplete(long ticket);

    /**
     * Whether writes issued up to {@code ticket} still queue in front of the device in such numbers that a write
     * issued now would wait behind them: a hint for senders that may hold small writes back and send them together
     * ({@code Messenger}'s coalescing). Cheap and never waits; may reap completions. A transport whose writes complete
     * as they are issued is never backlogged (the default).
     */
    default boolean isBacklogged(long ticket) {
        return false;
    }

    /**
     * Waits (bounded by the link's liveness checks) until {@code ticket} completes.
     *
     * @throws PeerFailedException if the peer fails first
     */
    void awaitCompletion(long ticket);

    /**
     * Cheap liveness check (a volatile read; no system call, no allocation) for use inside wait loops.
     *
     * @throws PeerFailedException if the peer, or this endpoint, is known to have failed or closed
     */
    void checkAlive();

    /** {@code false} once the peer is known to have failed or closed. */
    boolean isAlive();

    /**
     * The job declared the peer failed (fencing): from now on this link behaves as if the peer had died, whatever the
     * transport still sees. Every later operation and wait throws {@link PeerFailedException} with {@code reason}.
     * Idempotent; the first reason a link fails with is kept.
     */
    void fence(String reason);

    /** The link's counts for the counters file (writes posted, completions, errors), or null if it keeps none. */
    default LinkStatistics statistics() {
        return null;
    }
}
