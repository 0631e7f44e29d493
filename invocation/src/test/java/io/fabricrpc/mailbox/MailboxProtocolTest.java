package io.fabricrpc.mailbox;

import io.fabricrpc.transport.DelayedLink;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.transport.Transport;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The mailbox state machine over a real transport; every transport module runs it with its own fixture. */
public abstract class MailboxProtocolTest {
    protected abstract TransportFixture fixture();

    private Transport transport;
    private Arena arena;

    @BeforeEach
    void open() {
        transport = fixture().open();
        arena = Arena.ofShared();
    }

    @AfterEach
    void close() {
        arena.close();
        transport.close();
    }

    // ---------------------------------------------------------------------------------------------------------
    // Chesterfield's Table 1, row by row. Two delayed links (one per direction) make the lag between an outbox
    // write and the peer's inbox visible. One call of the paper = two exchanges here (request/result, then
    // finished/garbage-collected), since ownership flips on every hand-over.
    // ---------------------------------------------------------------------------------------------------------

    /** Rows of Table 1: mailbox values (client in, client out, server in, server out) and who may touch the packet. */
    enum Row {
        QUIESCENT(0, 0, 0, 0, Owner.CLIENT),
        WORK_POSTED(0, 1, 0, 0, Owner.NOBODY),
        WORK_ARRIVED(0, 1, 1, 0, Owner.SERVER),
        SERVER_WORKING(0, 1, 1, 0, Owner.SERVER),
        RESULT_POSTED(0, 1, 1, 1, Owner.NOBODY),
        RESULT_ARRIVED(1, 1, 1, 1, Owner.CLIENT),
        CLIENT_WORKING(1, 1, 1, 1, Owner.CLIENT),
        CLIENT_FINISHED(1, 0, 1, 1, Owner.NOBODY),
        FINISH_ARRIVED(1, 0, 0, 1, Owner.SERVER),
        SERVER_FINISHED(1, 0, 0, 0, Owner.NOBODY),
        FINISH_ACKNOWLEDGED(0, 0, 0, 0, Owner.CLIENT),
        CLIENT_RETURN(0, 0, 0, 0, Owner.CLIENT);

        final int clientIn;
        final int clientOut;
        final int serverIn;
        final int serverOut;
        final Owner owner;

        Row(int clientIn, int clientOut, int serverIn, int serverOut, Owner owner) {
            this.clientIn = clientIn;
            this.clientOut = clientOut;
            this.serverIn = serverIn;
            this.serverOut = serverOut;
            this.owner = owner;
        }
    }

    enum Owner { CLIENT, SERVER, NOBODY }

    /** Drives one port through a whole call, stopping after the step that reaches {@code target}. */
    private final class TableOne {
        final DelayedLink toServer;
        final DelayedLink toClient;
        final MailboxClient client;
        final MailboxServer server;
        Port clientPort;
        Port serverPort;

        TableOne() {
            Link self = transport.connect(transport.address());
            toServer = new DelayedLink(self);
            toClient = new DelayedLink(self);
            MailboxConfig config = MailboxConfig.defaults();
            LocalRegion[] c = MailboxChannels.allocate(transport, config.layout());
            LocalRegion[] s = MailboxChannels.allocate(transport, config.layout());
            client = new MailboxClient(toServer, c[0], c[1], s[0].remote(), config);
            server = new MailboxServer(toClient, s[0], s[1], c[0].remote(), config);
        }

        void runTo(Row target) {
            for (Row row : Row.values()) {
                step(row);
                check(row);
                if (row == target) {
                    return;
                }
            }
        }

        private void step(Row row) {
            switch (row) {
                case QUIESCENT -> clientPort = client.open();
                case WORK_POSTED -> clientPort.send(w -> put(w, 11));
                case WORK_ARRIVED, FINISH_ARRIVED -> assertEquals(2, toServer.deliver());
                case SERVER_WORKING -> {
                    serverPort = server.tryOpen();
                    assertNotNull(serverPort);
                    serverPort.recv((m, n) -> assertEquals(11, m.get(ValueLayout.JAVA_INT, 0)));
                }
                case RESULT_POSTED -> serverPort.send(w -> put(w, 22));
                case RESULT_ARRIVED, FINISH_ACKNOWLEDGED -> assertEquals(2, toClient.deliver());
                case CLIENT_WORKING -> clientPort.recv((m, n) -> assertEquals(22, m.get(ValueLayout.JAVA_INT, 0)));
                case CLIENT_FINISHED -> clientPort.send(w -> put(w, 33));
                case SERVER_FINISHED -> {
                    serverPort.recv((m, n) -> assertEquals(33, m.get(ValueLayout.JAVA_INT, 0)));
                    serverPort.send(w -> 0);
                    serverPort.close();
                }
                case CLIENT_RETURN -> {
                    clientPort.recv((m, n) -> assertEquals(0, n));
                    clientPort.close();
                }
            }
        }

        private void check(Row row) {
            int port = clientPort.index();
            String where = "row " + row;
            assertEquals(row.clientIn, client.inbox(port), where + ": client inbox");
            assertEquals(row.clientOut, clientPort.outbox(), where + ": client outbox");
            assertEquals(row.serverIn, server.inbox(port), where + ": server inbox");
            assertEquals(row.serverOut, server.ports[port].outbox(), where + ": server outbox");
            assertEquals(row.owner == Owner.CLIENT, clientPort.ownsPacket(), where + ": client owns");
            assertEquals(row.owner == Owner.SERVER, server.ports[port].ownsPacket(), where + ": server owns");
        }
    }

    private static long put(MemorySegment payload, int value) {
        payload.set(ValueLayout.JAVA_INT, 0, value);
        return 4;
    }

    @ParameterizedTest
    @EnumSource(Row.class)
    void tableOneRow(Row row) {
        new TableOne().runTo(row);
    }

    @Test
    void theBufferIsNeverOwnedByBothSidesAcrossManyCalls() {
        TableOne machine = new TableOne();
        for (int call = 0; call < 100; call++) {
            machine.runTo(Row.CLIENT_RETURN);
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Misuse: a clear exception, and the protocol state is untouched.
    // ---------------------------------------------------------------------------------------------------------

    @Test
    void sendTwiceWithoutRecvIsRefused() {
        try (MailboxChannels.Pair pair = MailboxChannels.loopback(transport, MailboxConfig.defaults())) {
            Port port = pair.client().open();
            port.send(w -> put(w, 1));
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> port.send(w -> put(w, 2)));
            assertTrue(e.getMessage().contains("send twice"), e.getMessage());
            assertTrue(pair.server().serveOne((req, n, reply) -> {
                assertEquals(1, req.get(ValueLayout.JAVA_INT, 0));
                return put(reply, 10);
            }));
            port.recv((m, n) -> assertEquals(10, m.get(ValueLayout.JAVA_INT, 0)));
            port.close();
        }
    }

    @Test
    void recvTwiceAndRecvBeforeSendAreRefused() {
        try (MailboxChannels.Pair pair = MailboxChannels.loopback(transport, MailboxConfig.defaults())) {
            Port port = pair.client().open();
            IllegalStateException before = assertThrows(IllegalStateException.class, () -> port.recv((m, n) -> { }));
            assertTrue(before.getMessage().contains("before any send"), before.getMessage());
            port.send(w -> put(w, 1));
            pair.server().serveOne((req, n, reply) -> put(reply, 2));
            port.recv((m, n) -> { });
            IllegalStateException twice = assertThrows(IllegalStateException.class, () -> port.recv((m, n) -> { }));
            assertTrue(twice.getMessage().contains("recv twice"), twice.getMessage());
            port.close();
        }
    }

    @Test
    void useAfterCloseAndUseFromAnotherThreadAreRefused() throws Exception {
        try (MailboxChannels.Pair pair = MailboxChannels.loopback(transport, MailboxConfig.defaults())) {
            Port port = pair.client().open();
            AtomicLong refusals = new AtomicLong();
            Thread other = Thread.ofPlatform().start(() -> {
                try {
                    port.send(w -> 0);
                } catch (IllegalStateException e) {
                    if (e.getMessage().contains("does not hold it")) {
                        refusals.incrementAndGet();
                    }
                }
            });
            other.join();
            assertEquals(1, refusals.get());
            port.close();
            port.close(); // idempotent
            IllegalStateException after = assertThrows(IllegalStateException.class, () -> port.send(w -> 0));
            assertTrue(after.getMessage().contains("use after close"), after.getMessage());
            assertThrows(IllegalStateException.class, () -> port.recv((m, n) -> { }));
            // The port is usable again by whoever opens it next.
            Port again = pair.client().open();
            again.send(w -> put(w, 5));
            pair.server().serveOne((req, n, reply) -> put(reply, req.get(ValueLayout.JAVA_INT, 0) + 1));
            again.recv((m, n) -> assertEquals(6, m.get(ValueLayout.JAVA_INT, 0)));
            again.close();
        }
    }

    @Test
    void serverSendBeforeReadingTheRequestIsRefused() {
        try (MailboxChannels.Pair pair = MailboxChannels.loopback(transport, MailboxConfig.defaults())) {
            Port client = pair.client().open();
            client.send(w -> put(w, 1));
            Port server = pair.server().tryOpen();
            assertThrows(IllegalStateException.class, () -> server.send(w -> 0));
            server.recv((m, n) -> { });
            server.send(w -> put(w, 3));
            server.close();
            client.recv((m, n) -> assertEquals(3, m.get(ValueLayout.JAVA_INT, 0)));
            client.close();
        }
    }

    @Test
    void aServerThatClosesWithoutReplyingReturnsAnEmptyReply() {
        try (MailboxChannels.Pair pair = MailboxChannels.loopback(transport, MailboxConfig.defaults())) {
            Port client = pair.client().open();
            client.send(w -> put(w, 1));
            Port server = pair.server().tryOpen();
            server.close();
            long[] length = {-1};
            client.recv((m, n) -> length[0] = n);
            assertEquals(0, length[0]);
            assertNull(pair.server().tryOpen(), "the port must not look pending again");
            client.close();
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // Ports, payload sizes, asynchronous calls, corruption.
    // ---------------------------------------------------------------------------------------------------------

    @Test
    void whenAllPortsAreHeldOpenFailsClearlyWithinItsTimeout() {
        MailboxConfig config = MailboxConfig.defaults().withOpenTimeout(Duration.ofMillis(100));
        try (MailboxChannels.Pair pair = MailboxChannels.loopback(transport, config)) {
            List<Port> held = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                held.add(pair.client().open());
            }
            assertEquals(64, held.stream().mapToInt(Port::index).distinct().count());
            assertNull(pair.client().tryOpen());
            long start = System.nanoTime();
            AllPortsBusyException e = assertThrows(AllPortsBusyException.class, () -> pair.client().open());
            long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(e.getMessage().contains("64") && e.getMessage().contains("100 ms"), e.getMessage());
            assertTrue(waitedMillis >= 100 && waitedMillis < 5_000, "waited " + waitedMillis + " ms");
            held.get(17).close();
            Port freed = pair.client().open();
            assertSame(held.get(17), freed);
            held.forEach(Port::close);
        }
    }

    @Test
    void fourThousandNinetySixPortsAllCarryCalls() {
        MailboxConfig config = MailboxConfig.defaults().withPorts(4096).withPacketSize(64);
        assertThrows(IllegalArgumentException.class, () -> MailboxConfig.defaults().withPorts(4160));
        assertThrows(IllegalArgumentException.class, () -> MailboxConfig.defaults().withPorts(100));
        try (MailboxChannels.Pair pair = MailboxChannels.loopback(transport, config)) {
            List<Port> held = new ArrayList<>();
            for (int i = 0; i < 4096; i++) {
                Port port = pair.client().open();
                int value = i;
                port.send(w -> put(w, value));
                held.add(port);
            }
            assertNull(pair.client().tryOpen(), "every port is held");
            int served = 0;
            while (pair.server().serveOne((req, n, reply) -> put(reply, -req.get(ValueLayout.JAVA_INT, 0)))) {
                served++;
            }
            assertEquals(4096, served);
            for (int i = 0; i < 4096; i++) {
                int expected = -i;
                held.get(i).recv((m, n) -> assertEquals(expected, m.get(ValueLayout.JAVA_INT, 0)));
                held.get(i).close();
            }
        }
    }

    @Test
    void oversizeMessagesStreamBothWaysUnderOneLock() throws Exception {
        MailboxConfig config = MailboxConfig.defaults().withPacketSize(128);
        try (MailboxChannels.Pair pair = MailboxChannels.loopback(transport, config)) {
            for (int size : new int[] {0, 1, 111, 112, 113, 224, 1000, 65_537}) {
                byte[] request = pattern(size, 7);
                MemorySegment src = arena.allocate(Math.max(1, size));
                MemorySegment.copy(MemorySegment.ofArray(request), 0, src, 0, size);
                AtomicBoolean served = new AtomicBoolean();
                Thread server = Thread.ofPlatform().start(() -> {
                    Port port;
                    while ((port = pair.server().tryOpen()) == null) {
                        Thread.onSpinWait();
                    }
                    MemorySegment copy = MemorySegment.ofArray(new byte[Math.max(1, size)]);
                    long n = port.recv(copy, 0);
                    // Echo it back reversed-by-pattern to prove the server saw every byte.
                    byte[] reply = pattern((int) n, 13);
                    assertArrayEquals(request, copy.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE));
                    port.send(MemorySegment.ofArray(reply), 0, n);
                    port.close();
                    served.set(true);
                });
                Port port = pair.client().open();
                port.send(src, 0, size);
                MemorySegment reply = MemorySegment.ofArray(new byte[Math.max(1, size)]);
                long n = port.recv(reply, 0);
                port.close();
                join(server);
                assertTrue(served.get());
                assertEquals(size, n);
                assertArrayEquals(pattern(size, 13), reply.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE));
            }
        }
    }

    @Test
    void aMessageOverTheLimitIsRefusedBeforeAnythingIsSent() {
        MailboxConfig config = new MailboxConfig(64, 128, Duration.ofSeconds(1), Duration.ofSeconds(5), 1000,
                MailboxConfig.defaults().idleStrategy());
        try (MailboxChannels.Pair pair = MailboxChannels.loopback(transport, config)) {
            Port port = pair.client().open();
            MailboxException e = assertThrows(MailboxException.class,
                    () -> port.send(arena.allocate(1001), 0, 1001));
            assertTrue(e.getMessage().contains("1001") && e.getMessage().contains("1000"), e.getMessage());
            assertNull(pair.server().tryOpen(), "nothing reached the server");
            port.close();
        }
    }

    @Test
    void asynchronousCallsFollowedBySynchronousOnes() throws Exception {
        try (MailboxChannels.Pair pair = MailboxChannels.loopback(transport, MailboxConfig.defaults())) {
            AtomicLong servedAsync = new AtomicLong();
            AtomicLong servedSync = new AtomicLong();
            AtomicBoolean stop = new AtomicBoolean();
            Thread server = Thread.ofPlatform().start(() -> {
                while (!stop.get()) {
                    pair.server().serveOne((req, n, reply) -> {
                        int value = req.get(ValueLayout.JAVA_INT, 0);
                        (value < 0 ? servedAsync : servedSync).incrementAndGet();
                        return put(reply, value * 2);
                    });
                }
            });
            // More asynchronous calls than ports: later ones must collect the replies left on earlier ports.
            for (int i = 1; i <= 200; i++) {
                int value = -i;
                Port port = pair.client().open();
                port.send(w -> put(w, value));
                port.close();
            }
            for (int i = 1; i <= 500; i++) {
                int value = i;
                Port port = pair.client().open();
                port.send(w -> put(w, value));
                port.recv((m, n) -> assertEquals(2 * value, m.get(ValueLayout.JAVA_INT, 0)));
                port.close();
            }
            stop.set(true);
            join(server);
            assertEquals(200, servedAsync.get());
            assertEquals(500, servedSync.get());
        }
    }

    @Test
    void aCorruptPacketIsReportedAndOtherPortsKeepWorking() {
        try (MailboxChannels.Pair pair = MailboxChannels.loopback(transport, MailboxConfig.defaults());
             LocalRegion forged = transport.allocate(256, RemoteAccess.NONE)) {
            MailboxServer server = pair.server();
            // A misbehaving peer writes a packet claiming 5000 bytes into port 3 and flips its inbox word.
            forged.segment().set(ValueLayout.JAVA_INT, MailboxLayout.PACKET_LENGTH_OFFSET, 5000);
            forged.segment().set(ValueLayout.JAVA_LONG, MailboxLayout.PACKET_MESSAGE_LENGTH_OFFSET, 5000);
            Link link = pair.client().link();
            link.write(forged, 0, pair.client().peerMailbox, server.layout.packetOffset(3), 16);
            link.writeLong(pair.client().peerMailbox, server.layout.inboxOffset(3), 1);
            Port bad = null;
            for (int i = 0; i < 64 && bad == null; i++) {
                Port p = server.tryOpen();
                if (p != null && p.index() == 3) {
                    bad = p;
                }
            }
            assertNotNull(bad);
            Port badPort = bad;
            CorruptPacketException e = assertThrows(CorruptPacketException.class, () -> badPort.recv((m, n) -> { }));
            assertTrue(e.getMessage().contains("5000") && e.getMessage().contains("port 3"), e.getMessage());
            // Other ports still serve normal calls.
            Port client = pair.client().open();
            client.send(w -> put(w, 9));
            Port serving;
            while ((serving = server.tryOpen()) == null) {
                Thread.onSpinWait();
            }
            serving.recv((m, n) -> assertEquals(9, m.get(ValueLayout.JAVA_INT, 0)));
            serving.send(w -> put(w, 10));
            serving.close();
            client.recv((m, n) -> assertEquals(10, m.get(ValueLayout.JAVA_INT, 0)));
            client.close();
        }
    }

    @Test
    void twoEndpointsHandshakeAndRefuseMismatchedLayouts() throws Exception {
        try (Transport serverEndpoint = fixture().open()) {
            MailboxServer[] accepted = new MailboxServer[1];
            Thread acceptor = Thread.ofPlatform().start(() -> accepted[0] = MailboxChannels.accept(serverEndpoint,
                    MailboxConfig.defaults(), Duration.ofSeconds(10)));
            MailboxHandshakeException refused = assertThrows(MailboxHandshakeException.class,
                    () -> MailboxChannels.connect(transport, serverEndpoint.address(),
                            MailboxConfig.defaults().withPorts(128), Duration.ofSeconds(10)));
            assertTrue(refused.getMessage().contains("128"), refused.getMessage());
            MailboxClient client = MailboxChannels.connect(transport, serverEndpoint.address(),
                    MailboxConfig.defaults(), Duration.ofSeconds(10));
            join(acceptor);
            Thread server = Thread.ofPlatform().start(() -> {
                while (!accepted[0].serveOne((req, n, reply) -> put(reply, req.get(ValueLayout.JAVA_INT, 0) + 100))) {
                    Thread.onSpinWait();
                }
            });
            Port port = client.open();
            port.send(w -> put(w, 1));
            port.recv((m, n) -> assertEquals(101, m.get(ValueLayout.JAVA_INT, 0)));
            port.close();
            join(server);
            client.close();
            accepted[0].close();
        }
    }

    @Test
    void aHandshakeWithNobodyListeningTimesOut() {
        try (Transport silent = fixture().open()) {
            MailboxHandshakeException e = assertThrows(MailboxHandshakeException.class,
                    () -> MailboxChannels.connect(transport, silent.address(), MailboxConfig.defaults(),
                            Duration.ofMillis(200)));
            assertTrue(e.getMessage().contains("200 ms"), e.getMessage());
        }
    }

    static byte[] pattern(int size, int seed) {
        byte[] bytes = new byte[size];
        for (int i = 0; i < size; i++) {
            bytes[i] = (byte) (i * seed + (i >>> 8));
        }
        return bytes;
    }

    static void join(Thread thread) throws InterruptedException {
        thread.join(30_000);
        assertFalse(thread.isAlive(), thread + " did not finish within 30 s");
    }
}
