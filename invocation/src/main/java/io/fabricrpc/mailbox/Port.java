package io.fabricrpc.mailbox;

import org.agrona.concurrent.IdleStrategy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A locked port of a {@link Mailbox}: the right to exchange packets with the peer on one port until
 * {@link #close()}. Obtained from {@link MailboxClient#open()} or {@link MailboxServer#tryOpen()}; used by the
 * thread that opened it. Port objects are pooled per index, so the hot path allocates nothing.
 *
 * <p>Each side alternates: {@code send} hands the packet to the peer, {@code recv} waits until the peer hands it
 * back and reads it. Misuse is an {@link IllegalStateException} naming the port and its state, and leaves the
 * protocol state untouched: send while the peer owns the packet, recv twice without a send in between, a client
 * recv before any send, any use after close or from a thread that does not hold the port.
 *
 * <p>Messages larger than one packet are streamed under the same lock: each fragment but the last carries
 * {@link MailboxLayout#FLAG_MORE} and the receiver answers it with an empty {@link MailboxLayout#FLAG_ACK}
 * packet, which hands ownership back for the next fragment.
 *
 * <p>Nested waits: a client that waits (for an ack of its request's fragment, or for its reply) pushes the port on
 * its thread's chain of suspended waits, and every wait of that thread above it (any port's, or
 * {@link #advanceSuspended()} from a wait loop outside the mailbox) advances the ports below: posts the next request
 * fragment once acked, takes and acks reply fragments into the reassembly buffer. So a thread that serves calls
 * while its own call is outstanding never leaves the peer stalled behind the nested wait: two workers serving each
 * other's calls inside their own {@code callReturn} both finish (model/mailbox_nested.pml). Only the holder thread
 * advances a port; a stream's last fragment stays in the packet for the suspended receive itself.
 */
public final class Port implements AutoCloseable {
    enum Phase {
        /** Not held. */
        CLOSED,
        /** Client: owns the packet, nothing received yet. */
        OWNED_EMPTY,
        /** Server: owns the packet, the client's message not read yet. */
        PENDING,
        /** Owns the packet and has read the peer's message. */
        RECEIVED,
        /** The peer owns the packet. */
        AWAITING
    }

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG;
    /** Per thread: the top of its chain of client sends and receives suspended in a wait (linked by {@link #below}). */
    private static final ThreadLocal<Port[]> SUSPENDED = ThreadLocal.withInitial(() -> new Port[1]);

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
    private final int payloadCapacity;
    private final long replyTimeoutNanos;
    private final IdleStrategy idle;

    // Guarded by the port lock (acquire on lock, release on unlock): only the holder reads or writes these.
    private long outbox;
    private Phase phase = Phase.CLOSED;
    private Thread holder;
    private MemorySegment reassembly = MemorySegment.NULL;
    /** Bytes of a streamed message reassembled so far (0 between messages), and that message's announced length. */
    private long received;
    private long expected;
    /** A streamed send in progress (null: none): its source and how much of it is posted. */
    private MemorySegment sendSource;
    private long sendOffset;
    private long sendLength;
    private long sendPosted;
    /** The wait this thread suspended before this one's, while this one is on the thread's chain; else null. */
    private Port below;
    private MemorySegment message;
    /** Client: the token of an asynchronous call whose reply is still to be collected on this port, or null. */
    private Object pendingReply;
    /** The bound of the current wait: the reply timeout, or less while collecting a reply for an opener. */
    private long waitNanos;

    Port(Mailbox box, int index, boolean server) {
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
        this.payloadCapacity = layout.payloadCapacity();
        this.replyTimeoutNanos = box.config.replyTimeout().toNanos();
        this.waitNanos = replyTimeoutNanos;
        this.idle = box.config.idleStrategy().get();
    }

    public int index() {
        return index;
    }

    /** The largest message that fits one packet (larger ones are streamed). */
    public int payloadCapacity() {
        return payloadCapacity;
    }

    /** Sends {@code length} bytes of {@code src} from {@code offset}; streams them if they exceed one packet. */
    public void send(MemorySegment src, long offset, long length) {
        requireSendable();
        if (length < 0 || length > box.config.maxMessageBytes()) {
            throw new MailboxException("port " + index + ": message of " + length + " bytes outside [0, "
                    + box.config.maxMessageBytes() + "] (maxMessageBytes)");
        }
        sendSource = src;
        sendOffset = offset;
        sendLength = length;
        sendPosted = 0;
        try {
            postFragment();
            while (sendSource != null) {
                awaitOwnership("the acknowledgement of a fragment"); // returns early if a nested wait sent the rest
                if (sendSource != null) {
                    int flags = incoming.get(INT, MailboxLayout.PACKET_FLAGS_OFFSET);
                    if (flags != MailboxLayout.FLAG_ACK) {
                        throw new CorruptPacketException("port " + index + ": expected a fragment acknowledgement,"
                                + " got flags 0x" + Integer.toHexString(flags) + " after " + sendPosted + " of "
                                + length + " bytes");
                    }
                    postFragment();
                }
            }
        } finally {
            sendSource = null; // a failed stream is over: nothing may post from it any more
        }
    }

    /** Posts the next fragment of the send in progress; after the last, the send is over and the peer's turn. */
    private void postFragment() {
        long chunk = Math.min(payloadCapacity, sendLength - sendPosted);
        boolean more = sendPosted + chunk < sendLength;
        MemorySegment.copy(sendSource, sendOffset + sendPosted, outgoingPayload, 0, chunk);
        post(chunk, more ? MailboxLayout.FLAG_MORE : 0, sendLength);
        sendPosted += chunk;
        if (!more) {
            sendSource = null;
            phase = Phase.AWAITING;
        }
    }

    /** Sends a message written in place by {@code writer} (at most {@link #payloadCapacity()} bytes). */
    public void send(PacketWriter writer) {
        requireSendable();
        long length = writer.write(outgoingPayload);
        if (length < 0 || length > payloadCapacity) {
            throw new MailboxException("port " + index + ": writer reported " + length + " bytes; a packet holds 0.."
                    + payloadCapacity);
        }
        post(length, 0, length);
        phase = Phase.AWAITING;
    }

    /** Waits for the peer's message (bounded) and passes it to {@code reader}. */
    public void recv(PacketReader reader) {
        long length = receive();
        reader.read(message, length);
    }

    /**
     * Waits for the peer's message and copies it into {@code dst} at {@code offset}.
     *
     * @return the message length
     * @throws MailboxException if it does not fit (the message is consumed regardless)
     */
    public long recv(MemorySegment dst, long offset) {
        long length = receive();
        if (length > dst.byteSize() - offset) {
            throw new MailboxException("port " + index + ": message of " + length + " bytes does not fit "
                    + (dst.byteSize() - offset) + " bytes of destination");
        }
        MemorySegment.copy(message, 0, dst, offset, length);
        return length;
    }

    /** {@link #send(MemorySegment, long, long)} then {@link #recv(PacketReader)}: one synchronous call. */
    public void sendAndRecv(MemorySegment src, long offset, long length, PacketReader reader) {
        send(src, offset, length);
        recv(reader);
    }

    /** {@link #send(PacketWriter)} then {@link #recv(PacketReader)}. */
    public void sendAndRecv(PacketWriter writer, PacketReader reader) {
        send(writer);
        recv(reader);
    }

    /** Server side of one call: receive the request and write the reply in place. */
    public void recvAndSend(RequestHandler handler) {
        long length = receive();
        long replyLength = handler.handle(message, length, outgoingPayload);
        if (replyLength < 0 || replyLength > payloadCapacity) {
            throw new MailboxException("port " + index + ": handler reported a reply of " + replyLength
                    + " bytes; a packet holds 0.." + payloadCapacity);
        }
        post(replyLength, 0, replyLength);
        phase = Phase.AWAITING;
    }

    /** Handles one request in place: reads {@code request[0, length)}, writes the reply into {@code reply}. */
    @FunctionalInterface
    public interface RequestHandler {
        /** @return the reply length, at most {@code reply.byteSize()} */
        long handle(MemorySegment request, long length, MemorySegment reply);
    }

    /**
     * Client: releases the port with the call just sent outstanding; whoever next locks the port collects the
     * reply and hands it, with {@code token}, to the client's {@link MailboxClient.ReplyCollector}.
     */
    public void closeAwaiting(Object token) {
        requireHolder("closeAwaiting");
        if (server || phase != Phase.AWAITING || token == null) {
            throw new IllegalStateException("closeAwaiting on " + this + " (a client port that has sent and not"
                    + " received, with a non-null token)");
        }
        pendingReply = token;
        phase = Phase.CLOSED;
        holder = null;
        box.unlock(index);
    }

    /**
     * Server: releases a pending port without reading it, as if it had not been opened; a later scan finds it again
     * (the request must wait for something the server has not seen yet).
     */
    public void defer() {
        requireHolder("defer");
        if (!server || phase != Phase.PENDING) {
            throw new IllegalStateException("defer on " + this + " (only a server port whose request is unread)");
        }
        phase = Phase.CLOSED;
        holder = null;
        box.unlock(index);
    }

    /**
     * Server: the first fragment's payload of the unread request, without consuming it (valid until the port is
     * released). Its header is validated; a corrupt one throws and leaves the request to {@link #recv}.
     */
    public MemorySegment peek() {
        requireHolder("peek");
        if (!server || phase != Phase.PENDING) {
            throw new IllegalStateException("peek on " + this + " (only a server port whose request is unread)");
        }
        int length = incoming.get(INT, MailboxLayout.PACKET_LENGTH_OFFSET);
        int flags = incoming.get(INT, MailboxLayout.PACKET_FLAGS_OFFSET);
        long messageLength = incoming.get(LONG, MailboxLayout.PACKET_MESSAGE_LENGTH_OFFSET);
        validate(length, flags, messageLength, 0);
        return incomingPayload.asSlice(0, length);
    }

    /**
     * Releases the port. A client that closes while the server owns the packet leaves an asynchronous call: the
     * next user of the port collects and drops its reply. A server that closes while it owns the packet first
     * sends an empty reply, so the port always returns to the client. Closing a closed port is a no-op.
     */
    @Override
    public void close() {
        if (phase == Phase.CLOSED) {
            return;
        }
        requireHolder("close");
        try {
            if (!server && phase == Phase.AWAITING && pendingReply == null) {
                pendingReply = DROP; // nobody waits for this reply: the next holder collects and drops it
            }
            if (server && phase != Phase.AWAITING) {
                if (phase == Phase.PENDING) {
                    receive(); // drains a streamed request so the empty reply is not taken for an ack
                }
                if (ownsPacket()) { // not after a failed stream: the peer holds the packet, posting would corrupt it
                    post(0, 0, 0);
                }
            }
        } finally {
            phase = Phase.CLOSED;
            holder = null;
            box.unlock(index);
        }
    }

    // ---- protocol steps (called with the port lock held) ----

    /** The owner test of {@link MailboxLayout}: client owns iff inbox == outbox; server iff inbox != outbox. */
    boolean ownsPacket() {
        return (box.inbox(index) == outbox) != server;
    }

    /** Racy hint for scans before locking: reads outbox without the lock; rechecked after locking. */
    boolean looksOwned(long inbox) {
        return (inbox == outbox) != server;
    }

    void acquiredBy(Thread thread, Phase initial) {
        holder = thread;
        phase = initial;
    }

    /** Marks a reply nobody collects (a client closed without receiving and without a token). */
    static final Object DROP = new Object();

    /** Client holder: the token of the outstanding asynchronous call on this port, or null. */
    Object pendingReply() {
        return pendingReply;
    }

    /**
     * Client: collects the reply of the asynchronous call left on this port (waiting for it, bounded) and hands it to
     * {@code collector} unless it was dropped. The port is then owned and empty, whatever the collector does.
     */
    void collectAbandonedReply(MailboxClient.ReplyCollector collector, long timeoutNanos) {
        Object token = pendingReply;
        phase = Phase.AWAITING;
        waitNanos = timeoutNanos;
        try {
            long length = receive();
            pendingReply = null;
            if (token != DROP && collector != null) {
                collector.collect(token, message, length);
            }
        } catch (CorruptPacketException e) {
            pendingReply = null; // the packet is ours again; the reply is lost and the collector hears why
            phase = Phase.OWNED_EMPTY;
            if (token != DROP && collector != null) {
                collector.failed(token, e);
            }
        } finally {
            waitNanos = replyTimeoutNanos;
            if (phase == Phase.RECEIVED) {
                phase = Phase.OWNED_EMPTY;
            }
        }
    }

    /**
     * Hands the packet to the peer: the bytes first, then the flipped outbox bit into the peer's inbox. The
     * transport makes the flag visible only after the bytes (writes in issue order; the peer loads the flag with
     * acquire). Staging may be refilled once we own the packet again: the peer saw the flag, so the earlier write
     * of the staging bytes has been carried out.
     */
    private void post(long length, int flags, long messageLength) {
        outgoing.set(INT, MailboxLayout.PACKET_LENGTH_OFFSET, (int) length);
        outgoing.set(INT, MailboxLayout.PACKET_FLAGS_OFFSET, flags);
        outgoing.set(LONG, MailboxLayout.PACKET_MESSAGE_LENGTH_OFFSET, messageLength);
        outbox ^= 1;
        // The flipped outbox lands in the peer's inbox word after the packet bytes (SPI guarantee).
        box.link.writeAndFlag(box.staging, stagingOffset, box.peerMailbox, packetOffset,
                MailboxLayout.PACKET_HEADER_LENGTH + length, inboxOffset, outbox);
    }

    private long receive() {
        requireHolder("recv");
        switch (phase) {
            case OWNED_EMPTY -> throw new IllegalStateException("recv on port " + index
                    + " before any send: the client owns the packet and nothing was sent");
            case RECEIVED -> throw new IllegalStateException("recv twice on port " + index
                    + " without a send in between");
            default -> {
            }
        }
        awaitOwnership("a message");
        long length;
        try {
            length = readMessage();
        } catch (CorruptPacketException e) {
            if (server) {
                phase = Phase.RECEIVED; // this side owns the packet: it may answer the corrupt request with an error
            }
            throw e;
        }
        phase = Phase.RECEIVED;
        return length;
    }

    /**
     * Reads the message in the owned packet, streaming the rest if it has more fragments. A stream already begun by
     * {@link #advance} (from a nested wait) continues where that left it.
     */
    private long readMessage() {
        while (true) {
            int length = incoming.get(INT, MailboxLayout.PACKET_LENGTH_OFFSET);
            int flags = incoming.get(INT, MailboxLayout.PACKET_FLAGS_OFFSET);
            long messageLength = incoming.get(LONG, MailboxLayout.PACKET_MESSAGE_LENGTH_OFFSET);
            if (received == 0 && (flags & MailboxLayout.FLAG_MORE) == 0) {
                validate(length, flags, messageLength, 0);
                message = incomingPayload;
                return length;
            }
            String problem = checkFragment(length, flags, messageLength);
            if (problem != null) {
                long had = received;
                received = 0; // the stream is broken: the next message starts afresh
                throw corrupt(problem + "; received " + had + " bytes so far", length, flags, messageLength);
            }
            absorb(length, messageLength);
            if ((flags & MailboxLayout.FLAG_MORE) == 0) {
                received = 0;
                message = reassembly;
                return messageLength;
            }
            post(0, MailboxLayout.FLAG_ACK, 0); // hands the packet back for the next fragment
            awaitOwnership("the next fragment");
        }
    }

    /** Why the owned packet is not the next fragment of the current stream, or null if it is. */
    private String checkFragment(int length, int flags, long messageLength) {
        if (received > 0 && messageLength != expected) {
            return "message length changed mid-stream from " + expected;
        }
        return isValid(length, flags, messageLength, received) ? null : "not a valid fragment";
    }

    /** Appends the owned packet's payload (a checked fragment) to the reassembly buffer. */
    private void absorb(int length, long messageLength) {
        if (received == 0) {
            expected = messageLength;
            if (reassembly.byteSize() < messageLength) {
                reassembly = MemorySegment.ofArray(new byte[(int) Math.min(Integer.MAX_VALUE - 8,
                        Math.max(messageLength, 2 * reassembly.byteSize()))]);
            }
        }
        MemorySegment.copy(incomingPayload, 0, reassembly, received, length);
        received += length;
    }

    /**
     * Suspended client wait, advanced by a nested wait of the holder thread. A streamed send posts its next fragment
     * once acked; a receive takes and acks a fragment with more to follow. Anything else (the last fragment, a whole
     * reply, a corrupt packet) stays in the packet for the suspended send or receive, which reads or reports it.
     */
    private void advance() {
        if (!ownsPacket()) {
            return;
        }
        if (sendSource != null) {
            if (incoming.get(INT, MailboxLayout.PACKET_FLAGS_OFFSET) == MailboxLayout.FLAG_ACK) {
                postFragment();
            }
            return;
        }
        int length = incoming.get(INT, MailboxLayout.PACKET_LENGTH_OFFSET);
        int flags = incoming.get(INT, MailboxLayout.PACKET_FLAGS_OFFSET);
        long messageLength = incoming.get(LONG, MailboxLayout.PACKET_MESSAGE_LENGTH_OFFSET);
        if ((flags & MailboxLayout.FLAG_MORE) == 0 || checkFragment(length, flags, messageLength) != null) {
            return;
        }
        absorb(length, messageLength);
        post(0, MailboxLayout.FLAG_ACK, 0);
    }

    /**
     * Advances the client sends and receives this thread has suspended (see the class doc): for wait loops outside
     * the mailbox, such as a future's, that may run while the thread's own call waits below them. Never waits.
     */
    public static void advanceSuspended() {
        for (Port port = SUSPENDED.get()[0]; port != null; port = port.below) {
            port.advance();
        }
    }

    private void validate(int length, int flags, long messageLength, long sofar) {
        if (!isValid(length, flags, messageLength, sofar)) {
            throw corrupt("received " + sofar + " bytes so far", length, flags, messageLength);
        }
    }

    private boolean isValid(int length, int flags, long messageLength, long sofar) {
        boolean more = (flags & MailboxLayout.FLAG_MORE) != 0;
        return length >= 0 && length <= payloadCapacity && (flags & ~MailboxLayout.KNOWN_FLAGS) == 0
                && (flags & MailboxLayout.FLAG_ACK) == 0
                && messageLength >= sofar + length && messageLength <= box.config.maxMessageBytes()
                && (more || messageLength == sofar + length) && (!more || length > 0);
    }

    private CorruptPacketException corrupt(String context, int length, int flags, long messageLength) {
        return new CorruptPacketException("port " + index + ": corrupt packet header (payload length " + length
                + ", capacity " + payloadCapacity + ", flags 0x" + Integer.toHexString(flags) + ", message length "
                + messageLength + ", limit " + box.config.maxMessageBytes() + "); " + context);
    }

    /**
     * Waits until this side owns the packet: bounded by the peer's liveness and the reply timeout. Meanwhile advances
     * the thread's suspended receives below; a client receive suspends itself here for the waits nested above it.
     */
    private void awaitOwnership(String what) {
        if (ownsPacket()) {
            return;
        }
        Port[] chain = SUSPENDED.get();
        boolean sending = sendSource != null;
        boolean suspend = !server && (sending || phase == Phase.AWAITING); // a call's request or reply in flight
        if (suspend) {
            below = chain[0];
            chain[0] = this;
        }
        try {
            long start = System.nanoTime();
            idle.reset();
            int polls = 0;
            Runnable hook = box.waitHook;
            while (!ownsPacket() && !(sending && sendSource == null)) {
                hook.run();
                for (Port port = suspend ? below : chain[0]; port != null; port = port.below) {
                    port.advance();
                }
                idle.idle();
                if ((++polls & 15) == 0) {
                    box.link.checkAlive(); // a volatile read; throws PeerFailedException for a dead peer
                    long waited = System.nanoTime() - start;
                    if (waited > waitNanos) {
                        throw new MailboxTimeoutException("port " + index + ": no " + what + " from the peer within "
                                + waitNanos / 1_000_000 + " ms (waited " + waited / 1_000_000
                                + " ms; the peer is alive but did not answer)");
                    }
                }
            }
        } finally {
            if (suspend) {
                chain[0] = below;
                below = null;
            }
        }
    }

    private void requireSendable() {
        requireHolder("send");
        switch (phase) {
            case AWAITING -> throw new IllegalStateException("send on port " + index
                    + " while the peer owns its packet (send twice without a recv)");
            case PENDING -> throw new IllegalStateException("send on port " + index
                    + " before receiving the client's pending message (recv it first)");
            default -> {
            }
        }
    }

    private void requireHolder(String operation) {
        Thread current = Thread.currentThread();
        if (phase == Phase.CLOSED) {
            throw new IllegalStateException(operation + " on closed port " + index + " (use after close)");
        }
        if (holder != current) {
            throw new IllegalStateException(operation + " on port " + index + " by thread '" + current.getName()
                    + "', which does not hold it (held by " + (holder == null ? "nobody" : "'" + holder.getName() + "'")
                    + ")");
        }
    }

    Phase phase() {
        return phase;
    }

    /** The holder's outbox bit (tests and diagnostics; racy without the lock). */
    long outbox() {
        return outbox;
    }

    @Override
    public String toString() {
        return (server ? "server" : "client") + " port " + index + " [" + phase + ", outbox " + outbox + "]";
    }
}
