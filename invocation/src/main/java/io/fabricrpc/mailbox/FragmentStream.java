package io.fabricrpc.mailbox;

import java.lang.foreign.MemorySegment;

/**
 * The messages of one {@link Port} as packets, streamed under its lock when longer than one: a send is cut into
 * fragments, each but the last carrying {@link MailboxLayout#FLAG_MORE}; a received message is read in place if
 * whole, else its fragments are checked and reassembled, each but the last answered with an empty
 * {@link MailboxLayout#FLAG_ACK} packet that hands ownership back. Every received header is checked here.
 * Invariant: at most one send or one reassembly is in progress, and its state is guarded by the port lock (only the
 * holder thread reads or writes it). Publishing goes through {@link PortPacket#post}, so this class adds no
 * shared-memory ordering of its own.
 */
final class FragmentStream {
    private final Port port;
    private final PortPacket packet;
    private final int index;
    private final MailboxConfig config;
    private final int payloadCapacity;

    // Guarded by the port lock (acquire on lock, release on unlock): only the holder reads or writes these.
    private MemorySegment reassembly = MemorySegment.NULL;
    /** The last message read: the packet's payload, or {@link #reassembly}. */
    private MemorySegment message;
    /** Bytes of a streamed message reassembled so far (0 between messages), and that message's announced length. */
    private long received;
    private long expected;
    /** A streamed send in progress (null: none): its source and how much of it is posted. */
    private MemorySegment sendSource;
    private long sendOffset;
    private long sendLength;
    private long sendPosted;

    FragmentStream(Port port, PortPacket packet, MailboxConfig config) {
        this.port = port;
        this.packet = packet;
        this.index = port.index();
        this.config = config;
        this.payloadCapacity = port.payloadCapacity();
    }

    /** A streamed send is in progress (some fragment not posted yet). */
    boolean sending() {
        return sendSource != null;
    }

    /** The last message read: the packet's payload, or the reassembly buffer; valid until the next one. */
    MemorySegment message() {
        return message;
    }

    /** Posts {@code src[offset, offset + length)} as fragments, one per packet, each but the last acked. */
    void send(MemorySegment src, long offset, long length) {
        sendSource = src;
        sendOffset = offset;
        sendLength = length;
        sendPosted = 0;
        try {
            postFragment();
            while (sendSource != null) {
                // returns early if a nested wait sent the rest
                port.awaitOwnership("the acknowledgement of a fragment");
                if (sendSource != null) {
                    int flags = packet.flags();
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
        MemorySegment.copy(sendSource, sendOffset + sendPosted, packet.outgoingPayload(), 0, chunk);
        packet.post(chunk, more ? MailboxLayout.FLAG_MORE : 0, sendLength);
        sendPosted += chunk;
        if (!more) {
            sendSource = null;
            port.sent();
        }
    }

    /**
     * Reads the message in the owned packet, streaming the rest if it has more fragments. A stream already begun by
     * {@link #advance} (from a nested wait) continues where that left it.
     *
     * @return the message length; the message is {@link #message()}
     */
    long read() {
        while (true) {
            int length = packet.length();
            int flags = packet.flags();
            long messageLength = packet.messageLength();
            if (received == 0 && (flags & MailboxLayout.FLAG_MORE) == 0) {
                validate(length, flags, messageLength, 0);
                message = packet.payload();
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
            packet.post(0, MailboxLayout.FLAG_ACK, 0); // hands the packet back for the next fragment
            port.awaitOwnership("the next fragment");
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
        MemorySegment.copy(packet.payload(), 0, reassembly, received, length);
        received += length;
    }

    /**
     * Suspended client wait, advanced by a nested wait of the holder thread. A streamed send posts its next fragment
     * once acked; a receive takes and acks a fragment with more to follow. Anything else (the last fragment, a whole
     * reply, a corrupt packet) stays in the packet for the suspended send or receive, which reads or reports it.
     */
    void advance() {
        if (!packet.owned()) {
            return;
        }
        if (sendSource != null) {
            if (packet.flags() == MailboxLayout.FLAG_ACK) {
                postFragment();
            }
            return;
        }
        int length = packet.length();
        int flags = packet.flags();
        long messageLength = packet.messageLength();
        if ((flags & MailboxLayout.FLAG_MORE) == 0 || checkFragment(length, flags, messageLength) != null) {
            return;
        }
        absorb(length, messageLength);
        packet.post(0, MailboxLayout.FLAG_ACK, 0);
    }

    /** The owned packet's payload, its header validated, without reading the message ({@link Port#peek()}). */
    MemorySegment peek() {
        int length = packet.length();
        int flags = packet.flags();
        long messageLength = packet.messageLength();
        validate(length, flags, messageLength, 0);
        return packet.payload().asSlice(0, length);
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
                && messageLength >= sofar + length && messageLength <= config.maxMessageBytes()
                && (more || messageLength == sofar + length) && (!more || length > 0);
    }

    private CorruptPacketException corrupt(String context, int length, int flags, long messageLength) {
        return new CorruptPacketException("port " + index + ": corrupt packet header (payload length " + length
                + ", capacity " + payloadCapacity + ", flags 0x" + Integer.toHexString(flags) + ", message length "
                + messageLength + ", limit " + config.maxMessageBytes() + "); " + context);
    }
}
