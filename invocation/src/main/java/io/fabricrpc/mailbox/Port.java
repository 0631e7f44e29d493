package io.fabricrpc.mailbox;

import java.lang.foreign.MemorySegment;

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
 * packet, which hands ownership back for the next fragment. A client's wait (for an ack or for its reply) is
 * advanced by every wait its thread nests above it, and by {@link #advanceSuspended()}, so a thread serving calls
 * while its own call is outstanding never stalls the peer (model/mailbox_nested.pml).
 *
 * <p>Here: the state machine of a locked port (holder, phase, misuse checks, open/claim/close). The packet and its
 * ownership bit are {@code PortPacket}, messages as packets {@code FragmentStream}, the waits {@code PortWait}.
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

    private final Mailbox box;
    private final int index;
    private final boolean server;
    private final int payloadCapacity;
    private final PortPacket packet;
    private final FragmentStream stream;
    private final PortWait wait;

    // Guarded by the port lock (acquire on lock, release on unlock): only the holder reads or writes these.
    private Phase phase = Phase.CLOSED;
    private Thread holder;
    /** Client: the token of an asynchronous call whose reply is still to be collected on this port, or null. */
    private Object pendingReply;

    Port(Mailbox box, int index, boolean server) {
        this.box = box;
        this.index = index;
        this.server = server;
        this.payloadCapacity = box.layout.payloadCapacity();
        this.packet = new PortPacket(box, index, server);
        this.stream = new FragmentStream(this, packet, box.config);
        this.wait = new PortWait(index, packet, stream, box);
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
        stream.send(src, offset, length);
    }

    /** Sends a message written in place by {@code writer} (at most {@link #payloadCapacity()} bytes). */
    public void send(PacketWriter writer) {
        requireSendable();
        long length = writer.write(packet.outgoingPayload());
        if (length < 0 || length > payloadCapacity) {
            throw new MailboxException("port " + index + ": writer reported " + length + " bytes; a packet holds 0.."
                    + payloadCapacity);
        }
        packet.post(length, 0, length);
        phase = Phase.AWAITING;
    }

    /** Waits for the peer's message (bounded) and passes it to {@code reader}. */
    public void recv(PacketReader reader) {
        long length = receive();
        reader.read(stream.message(), length);
    }

    /**
     * {@link #recv(PacketReader)} with each wait bounded by {@code timeoutNanos} instead of the reply timeout (a
     * call's own deadline); a wait past it throws {@link MailboxTimeoutException}.
     */
    public void recv(PacketReader reader, long timeoutNanos) {
        wait.bound(timeoutNanos);
        try {
            recv(reader);
        } finally {
            wait.unbound();
        }
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
        MemorySegment.copy(stream.message(), 0, dst, offset, length);
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
        long replyLength = handler.handle(stream.message(), length, packet.outgoingPayload());
        if (replyLength < 0 || replyLength > payloadCapacity) {
            throw new MailboxException("port " + index + ": handler reported a reply of " + replyLength
                    + " bytes; a packet holds 0.." + payloadCapacity);
        }
        packet.post(replyLength, 0, replyLength);
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
        return stream.peek();
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
                    packet.post(0, 0, 0);
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
        return packet.owned();
    }

    /** Racy hint for scans before locking: reads outbox without the lock; rechecked after locking. */
    boolean looksOwned(long inbox) {
        return packet.looksOwned(inbox);
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
        wait.bound(timeoutNanos);
        try {
            long length = receive();
            pendingReply = null;
            if (token != DROP && collector != null) {
                collector.collect(token, stream.message(), length);
            }
        } catch (CorruptPacketException e) {
            pendingReply = null; // the packet is ours again; the reply is lost and the collector hears why
            phase = Phase.OWNED_EMPTY;
            if (token != DROP && collector != null) {
                collector.failed(token, e);
            }
        } finally {
            wait.unbound();
            if (phase == Phase.RECEIVED) {
                phase = Phase.OWNED_EMPTY;
            }
        }
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
            length = stream.read();
        } catch (CorruptPacketException e) {
            if (server) {
                phase = Phase.RECEIVED; // this side owns the packet: it may answer the corrupt request with an error
            }
            throw e;
        }
        phase = Phase.RECEIVED;
        return length;
    }

    /** The last packet of a message is posted: the peer owns the packet until it answers. */
    void sent() {
        phase = Phase.AWAITING;
    }

    /**
     * Advances the client sends and receives this thread has suspended (see the class doc): for wait loops outside
     * the mailbox, such as a future's, that may run while the thread's own call waits below them. Never waits.
     */
    public static void advanceSuspended() {
        PortWait.advanceSuspended();
    }

    /** Waits (bounded) until this side owns the packet; a client's request or reply in flight suspends meanwhile. */
    void awaitOwnership(String what) {
        wait.awaitOwnership(what, !server && (stream.sending() || phase == Phase.AWAITING));
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
        return packet.outbox();
    }

    @Override
    public String toString() {
        return (server ? "server" : "client") + " port " + index + " [" + phase + ", outbox " + packet.outbox() + "]";
    }
}
