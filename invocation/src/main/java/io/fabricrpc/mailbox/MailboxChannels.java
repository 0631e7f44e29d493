package io.fabricrpc.mailbox;

import io.fabricrpc.transport.EndpointAddress;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.transport.Transport;
import org.agrona.concurrent.IdleStrategy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;

/**
 * Sets up mailbox channels. Between two endpoints the client and server exchange their mailbox-region handles
 * with two-sided messages (no prior negotiation, as Seriema's no-setup calls); within one endpoint
 * {@link #loopback} wires both sides directly.
 *
 * <pre>
 * HELLO (client -> server), type {@value #HELLO}:
 *  0        4             8                                    48
 *  +--------+-------------+------------------------------------+
 *  | ports  | packet size | client mailbox region (RemoteRegion) |
 *  +--------+-------------+------------------------------------+
 * WELCOME (server -> client), type {@value #WELCOME}:
 *  0        4        8             12       16                                   56
 *  +--------+--------+-------------+--------+------------------------------------+
 *  | status | ports  | packet size | (pad)  | server mailbox region (RemoteRegion) |
 *  +--------+--------+-------------+--------+------------------------------------+
 *  status: 0 accepted; 1 refused because ports or packet size differ from the server's
 * </pre>
 */
public final class MailboxChannels {
    public static final int HELLO = 0x4D420001;
    public static final int WELCOME = 0x4D420002;
    static final int HELLO_LENGTH = 8 + RemoteRegion.ENCODED_LENGTH;
    static final int WELCOME_LENGTH = 16 + RemoteRegion.ENCODED_LENGTH;
    static final int STATUS_OK = 0;
    static final int STATUS_MISMATCH = 1;

    private MailboxChannels() {
    }

    /** Both sides of a channel inside one endpoint (threads of one process over a loopback link). */
    public record Pair(MailboxClient client, MailboxServer server) implements AutoCloseable {
        @Override
        public void close() {
            client.close();
            server.close();
        }
    }

    public static Pair loopback(Transport transport, MailboxConfig config) {
        Link self = transport.connect(transport.address());
        LocalRegion[] clientRegions = allocate(transport, config.layout());
        LocalRegion[] serverRegions = allocate(transport, config.layout());
        MailboxClient client = new MailboxClient(self, clientRegions[0], clientRegions[1], serverRegions[0].remote(),
                config);
        MailboxServer server = new MailboxServer(self, serverRegions[0], serverRegions[1], clientRegions[0].remote(),
                config);
        return new Pair(client, server);
    }

    /**
     * Connects to the endpoint at {@code server}, which must be in {@link #accept}.
     *
     * @throws MailboxHandshakeException if the server refuses (configuration mismatch) or does not answer in time
     */
    public static MailboxClient connect(Transport transport, EndpointAddress server, MailboxConfig config,
                                        Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Link link = transport.connect(server);
        MailboxLayout layout = config.layout();
        LocalRegion[] regions = allocate(transport, layout);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment hello = arena.allocate(HELLO_LENGTH);
            hello.set(ValueLayout.JAVA_INT, 0, layout.ports());
            hello.set(ValueLayout.JAVA_INT, 4, layout.packetSize());
            regions[0].remote().encode(hello, 8);
            IdleStrategy idle = config.idleStrategy().get();
            while (!link.send(HELLO, hello, 0, HELLO_LENGTH)) {
                waitOrFail(deadline, timeout, "the server's message queue to accept HELLO", link, idle);
            }
            RemoteRegion[] serverRegion = new RemoteRegion[1];
            while (serverRegion[0] == null) {
                int delivered = transport.pollMessages((from, type, payload) -> {
                    if (type != WELCOME || from.peerId() != link.peerId()) {
                        throw new MailboxHandshakeException("unexpected message type 0x" + Integer.toHexString(type)
                                + " from endpoint " + Long.toHexString(from.peerId()) + " while awaiting WELCOME from "
                                + Long.toHexString(link.peerId()));
                    }
                    int status = payload.get(ValueLayout.JAVA_INT_UNALIGNED, 0);
                    if (status != STATUS_OK) {
                        throw new MailboxHandshakeException("server refused the mailbox: it has "
                                + payload.get(ValueLayout.JAVA_INT_UNALIGNED, 4) + " ports of "
                                + payload.get(ValueLayout.JAVA_INT_UNALIGNED, 8) + " bytes, the client asked for "
                                + layout.ports() + " of " + layout.packetSize());
                    }
                    serverRegion[0] = RemoteRegion.decode(payload, 16);
                }, 1);
                if (delivered == 0) {
                    waitOrFail(deadline, timeout, "WELCOME", link, idle);
                }
            }
            return new MailboxClient(link, regions[0], regions[1], serverRegion[0], config);
        } catch (RuntimeException e) {
            regions[0].close();
            regions[1].close();
            throw e;
        }
    }

    /**
     * Waits for one client's HELLO and answers it. A client whose layout differs is refused (it gets a WELCOME
     * with a mismatch status) and the wait goes on.
     */
    public static MailboxServer accept(Transport transport, MailboxConfig config, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        MailboxLayout layout = config.layout();
        IdleStrategy idle = config.idleStrategy().get();
        MailboxServer[] accepted = new MailboxServer[1];
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment welcome = arena.allocate(WELCOME_LENGTH);
            while (accepted[0] == null) {
                int delivered = transport.pollMessages((from, type, payload) -> {
                    if (type != HELLO) {
                        throw new MailboxHandshakeException("unexpected message type 0x" + Integer.toHexString(type)
                                + " from endpoint " + Long.toHexString(from.peerId()) + " while awaiting HELLO");
                    }
                    int ports = payload.get(ValueLayout.JAVA_INT_UNALIGNED, 0);
                    int packetSize = payload.get(ValueLayout.JAVA_INT_UNALIGNED, 4);
                    welcome.set(ValueLayout.JAVA_INT, 4, layout.ports());
                    welcome.set(ValueLayout.JAVA_INT, 8, layout.packetSize());
                    if (ports != layout.ports() || packetSize != layout.packetSize()) {
                        welcome.set(ValueLayout.JAVA_INT, 0, STATUS_MISMATCH);
                        reply(from, welcome, deadline, timeout, idle);
                        return;
                    }
                    RemoteRegion clientRegion = RemoteRegion.decode(payload, 8);
                    LocalRegion[] regions = allocate(transport, layout);
                    welcome.set(ValueLayout.JAVA_INT, 0, STATUS_OK);
                    regions[0].remote().encode(welcome, 16);
                    accepted[0] = new MailboxServer(from, regions[0], regions[1], clientRegion, config);
                    reply(from, welcome, deadline, timeout, idle);
                }, 1);
                if (delivered == 0) {
                    waitOrFail(deadline, timeout, "a client's HELLO", null, idle);
                }
            }
        }
        return accepted[0];
    }

    private static void reply(Link to, MemorySegment welcome, long deadline, Duration timeout, IdleStrategy idle) {
        while (!to.send(WELCOME, welcome, 0, WELCOME_LENGTH)) {
            waitOrFail(deadline, timeout, "the client's message queue to accept WELCOME", to, idle);
        }
    }

    /** One side's regions: {@code [0]} its mailbox (peers write it), {@code [1]} its staging; for {@link #client}. */
    public static LocalRegion[] allocate(Transport transport, MailboxConfig config) {
        return allocate(transport, config.layout());
    }

    /** The client side over regions from {@link #allocate} and the server's mailbox region, exchanged by the caller. */
    public static MailboxClient client(Link link, LocalRegion[] regions, RemoteRegion serverMailbox,
                                       MailboxConfig config) {
        return new MailboxClient(link, regions[0], regions[1], serverMailbox, config);
    }

    /** The server side over regions from {@link #allocate} and the client's mailbox region. */
    public static MailboxServer server(Link link, LocalRegion[] regions, RemoteRegion clientMailbox,
                                       MailboxConfig config) {
        return new MailboxServer(link, regions[0], regions[1], clientMailbox, config);
    }

    static LocalRegion[] allocate(Transport transport, MailboxLayout layout) {
        LocalRegion mailbox = transport.allocate(layout.mailboxRegionLength(), RemoteAccess.WRITE);
        LocalRegion staging = transport.allocate(layout.stagingRegionLength(), RemoteAccess.NONE);
        Mailbox.initializeRegion(mailbox.segment(), layout);
        return new LocalRegion[] {mailbox, staging};
    }

    private static void waitOrFail(long deadline, Duration timeout, String what, Link link, IdleStrategy idle) {
        if (link != null) {
            link.checkAlive();
        }
        if (System.nanoTime() - deadline > 0) {
            throw new MailboxHandshakeException("mailbox handshake: no " + what + " within " + timeout.toMillis()
                    + " ms");
        }
        idle.idle();
    }
}
