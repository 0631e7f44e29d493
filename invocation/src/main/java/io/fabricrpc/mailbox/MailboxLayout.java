package io.fabricrpc.mailbox;

import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * Memory layout of a mailbox channel: each side (client and server) owns one mailbox region that only the
 * <em>peer</em> writes, plus a local staging region that is the source of its own writes. Both sides use the
 * same layout, so a port's offsets are the same at both ends.
 *
 * <pre>
 * Mailbox region (RemoteAccess.WRITE; written by the peer, read locally):
 *  0                  64                         64 + 8N (rounded up to 64)
 *  +------------------+--------------------------+---------------------------------------------+
 *  | header           | inbox[0..N-1]            | packet[0..N-1], packetSize bytes each        |
 *  +------------------+--------------------------+---------------------------------------------+
 * Staging region (RemoteAccess.NONE): packet[0..N-1], the bytes this side writes into the peer's packet.
 *
 * Packet (packetSize bytes, a multiple of 64):
 *  0                4                8                                16
 *  +----------------+----------------+--------------------------------+----------------------------+
 *  | payload length | flags          | message length                 | payload (packetSize - 16)  |
 *  +----------------+----------------+--------------------------------+----------------------------+
 *  flags: FLAG_MORE  another fragment of the same message follows (streamed under the same port lock)
 *         FLAG_ACK   an empty packet that hands ownership back between fragments
 *
 * Header (informational; validated by the handshake): magic(8) version(4) ports(4) packetSize(4)
 * </pre>
 *
 * <p><b>Protocol invariant (one bit per port, after Chesterfield §7 and LLVM libc's rpc.h).</b> For port p each
 * side keeps a process-local {@code outbox} bit (the value it last wrote into the peer's inbox[p]) and reads
 * its own inbox[p], which only the peer writes. <em>The client owns port p's packet iff inbox[p] == outbox[p];
 * the server owns it iff inbox[p] != outbox[p].</em> Only the owner touches its copy of the packet. Handing the
 * packet over is: write the packet into the peer's copy, then flip outbox and write it into the peer's
 * inbox[p] with {@code Link.writeLong} — ordered after the packet write by the transport, read by the peer with
 * an acquiring load, so the peer never sees the flag before the bytes. Outbox[p] is only written while holding
 * the process-local lock of port p, so each port is a one-client, one-server state machine at any time.
 */
public final class MailboxLayout {
    public static final long MAGIC = 0x31584F424C49414DL; // "MAILBOX1"
    public static final int VERSION = 1;
    public static final int HEADER_LENGTH = 64;
    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 8;
    public static final int PORTS_OFFSET = 12;
    public static final int PACKET_SIZE_OFFSET = 16;

    public static final int PACKET_LENGTH_OFFSET = 0;
    public static final int PACKET_FLAGS_OFFSET = 4;
    public static final int PACKET_MESSAGE_LENGTH_OFFSET = 8;
    public static final int PACKET_HEADER_LENGTH = 16;

    public static final int FLAG_MORE = 1;
    public static final int FLAG_ACK = 2;
    static final int KNOWN_FLAGS = FLAG_MORE | FLAG_ACK;

    public static final int MIN_PORTS = 64;
    public static final int MAX_PORTS = 4096;
    public static final int MIN_PACKET_SIZE = 64;

    /** Acquire loads and release stores of the 8-byte inbox words ({@code (MemorySegment, long offset)}). */
    static final VarHandle INBOX = ValueLayout.JAVA_LONG.varHandle();

    private final int ports;
    private final int packetSize;

    public MailboxLayout(int ports, int packetSize) {
        if (ports < MIN_PORTS || ports > MAX_PORTS || ports % 64 != 0) {
            throw new IllegalArgumentException("mailbox ports must be a multiple of 64 in [" + MIN_PORTS + ", "
                    + MAX_PORTS + "], got " + ports);
        }
        if (packetSize < MIN_PACKET_SIZE || packetSize % 64 != 0) {
            throw new IllegalArgumentException("mailbox packet size must be a multiple of 64, >= " + MIN_PACKET_SIZE
                    + ", got " + packetSize);
        }
        this.ports = ports;
        this.packetSize = packetSize;
    }

    public int ports() {
        return ports;
    }

    public int packetSize() {
        return packetSize;
    }

    public int payloadCapacity() {
        return packetSize - PACKET_HEADER_LENGTH;
    }

    public long inboxOffset(int port) {
        return HEADER_LENGTH + 8L * port;
    }

    public long packetsOffset() {
        return align64(HEADER_LENGTH + 8L * ports);
    }

    /** Offset of port's packet in the mailbox region (the peer's copy is at the same offset in its region). */
    public long packetOffset(int port) {
        return packetsOffset() + (long) packetSize * port;
    }

    public long mailboxRegionLength() {
        return packetsOffset() + (long) packetSize * ports;
    }

    public long stagingOffset(int port) {
        return (long) packetSize * port;
    }

    public long stagingRegionLength() {
        return (long) packetSize * ports;
    }

    private static long align64(long value) {
        return (value + 63) & ~63L;
    }
}
