package io.fabricrpc.transport;

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
     * Writes {@code length} bytes like {@link #write}, except the byte at {@code holeOffset} (inside the range, not
     * its first byte), which the peer already holds as zero and which this write leaves zero whatever {@code src}
     * holds there. Under RDMA this is one WRITE gathering [start, hole), a zero byte and (hole, end): a messenger
     * re-sends its previous, still unpublished records with their flag now set, followed by new records whose flag
     * must not travel with them, and so publishes the previous batch and writes the next one with one work request
     * (see {@code Messenger}'s deferred publication). The default issues the two writes around the hole.
     *
     * @return the ticket of the (last) write
     * @throws TransportException as {@link #write}, or if the hole is not strictly inside the range
     */
    default long writeAround(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length,
                             long holeOffset) {
        checkHole(dst, dstOffset, length, holeOffset);
        long ticket = write(src, srcOffset, dst, dstOffset, holeOffset - dstOffset);
        long after = dstOffset + length - holeOffset - 1;
        return after == 0 ? ticket : write(src, srcOffset + holeOffset - dstOffset + 1, dst, holeOffset + 1, after);
    }

    /**
     * The argument check every {@link #writeAround} makes.
     *
     * @throws TransportException unless {@code dstOffset < holeOffset < dstOffset + length}
     */
    static void checkHole(RemoteRegion dst, long dstOffset, long length, long holeOffset) {
        if (holeOffset <= dstOffset || holeOffset >= dstOffset + length) {
            throw new TransportException("writeAround needs its hole strictly inside the range after its first byte, got"
                    + " hole " + holeOffset + " for [" + dstOffset + ", " + (dstOffset + length) + ") of " + dst);
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
     *
     * @throws TransportException if the region is not the peer's or does not allow writes
     */
    default java.lang.foreign.MemorySegment directWindow(RemoteRegion region) {
        return null;
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

    /** True once the operation with this ticket has completed. */
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
}
