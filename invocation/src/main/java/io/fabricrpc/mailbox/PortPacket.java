package io.fabricrpc.mailbox;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * One port's packet in shared memory and its ownership bit, the one-bit hand-off of {@link MailboxLayout} (and of
 * the models in {@code model/}): the owner test reads the inbox word with acquire, and {@link #post} writes the
 * packet into the peer's copy before the flipped outbox bit into the peer's inbox. Invariant: outbox changes only
 * in {@link #post}, under the port lock, and the packet is touched only while this side owns it.
 */
final class PortPacket {
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG;

    private final Mailbox box;
    private final int index;
    private final boolean server;
    private final long inboxOffset;
    private final long packetOffset;
    private final long stagingOffset;
    private final MemorySegment incoming;
    private final MemorySegment incomingPayload;
    private final MemorySegment outgoing;
    private final MemorySegment outgoingPayload;

    // Guarded by the port lock (acquire on lock, release on unlock): only the holder reads or writes it.
    private long outbox;

    PortPacket(Mailbox box, int index, boolean server) {
        this.box = box;
        this.index = index;
        this.server = server;
        MailboxLayout layout = box.layout;
        this.inboxOffset = layout.inboxOffset(index);
        this.packetOffset = layout.packetOffset(index);
        this.stagingOffset = layout.stagingOffset(index);
        this.incoming = box.mailbox.segment().asSlice(packetOffset, layout.packetSize());
        this.outgoing = box.staging.segment().asSlice(stagingOffset, layout.packetSize());
        this.incomingPayload = incoming.asSlice(MailboxLayout.PACKET_HEADER_LENGTH);
        this.outgoingPayload = outgoing.asSlice(MailboxLayout.PACKET_HEADER_LENGTH);
    }

    /** The owner test of {@link MailboxLayout}: client owns iff inbox == outbox; server iff inbox != outbox. */
    boolean owned() {
        return (box.inbox(index) == outbox) != server;
    }

    /** Racy hint for scans before locking: reads outbox without the lock; rechecked after locking. */
    boolean looksOwned(long inbox) {
        return (inbox == outbox) != server;
    }

    /** The holder's outbox bit (tests and diagnostics; racy without the lock). */
    long outbox() {
        return outbox;
    }

    /** The owned packet's payload length (header). */
    int length() {
        return incoming.get(INT, MailboxLayout.PACKET_LENGTH_OFFSET);
    }

    /** The owned packet's flags (header). */
    int flags() {
        return incoming.get(INT, MailboxLayout.PACKET_FLAGS_OFFSET);
    }

    /** The owned packet's message length (header): the whole message's, of which it may be one fragment. */
    long messageLength() {
        return incoming.get(LONG, MailboxLayout.PACKET_MESSAGE_LENGTH_OFFSET);
    }

    /** The owned packet's payload, as the peer wrote it. */
    MemorySegment payload() {
        return incomingPayload;
    }

    /** Where the next {@link #post} takes its payload from (this side's staging copy of the packet). */
    MemorySegment outgoingPayload() {
        return outgoingPayload;
    }

    /**
     * Hands the packet to the peer: the bytes first, then the flipped outbox bit into the peer's inbox. The
     * transport makes the flag visible only after the bytes (writes in issue order; the peer loads the flag with
     * acquire). Staging may be refilled once we own the packet again: the peer saw the flag, so the earlier write
     * of the staging bytes has been carried out.
     */
    void post(long length, int flags, long messageLength) {
        outgoing.set(INT, MailboxLayout.PACKET_LENGTH_OFFSET, (int) length);
        outgoing.set(INT, MailboxLayout.PACKET_FLAGS_OFFSET, flags);
        outgoing.set(LONG, MailboxLayout.PACKET_MESSAGE_LENGTH_OFFSET, messageLength);
        outbox ^= 1;
        // The flipped outbox lands in the peer's inbox word after the packet bytes (SPI guarantee).
        box.link.writeAndFlag(box.staging, stagingOffset, box.peerMailbox, packetOffset,
                MailboxLayout.PACKET_HEADER_LENGTH + length, inboxOffset, outbox);
    }
}
