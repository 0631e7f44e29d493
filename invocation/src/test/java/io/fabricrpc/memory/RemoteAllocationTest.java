package io.fabricrpc.memory;

import io.fabricrpc.api.RemoteAllocationException;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.invocation.LocalJob;
import io.fabricrpc.api.MessengerConfig;
import io.fabricrpc.messaging.ServiceDispatcher;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.transport.Transport;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Remote allocation as a no-setup service call, on the service and on the fabric; every transport module runs it. */
public abstract class RemoteAllocationTest {
    protected abstract TransportFixture fixture();

    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private Transport a;
    private Transport b;
    private ServiceDispatcher serviceA;
    private ServiceDispatcher serviceB;

    @BeforeEach
    void open() {
        a = fixture().open();
        b = fixture().open();
        serviceA = new ServiceDispatcher(a).start();
        serviceB = new ServiceDispatcher(b);
    }

    @AfterEach
    void close() {
        serviceA.close();
        serviceB.close();
        b.close();
        a.close();
    }

    @Test
    void aRemoteRegionTakesOneSidedWritesAndReadsAndIsFreedOnce() {
        RemoteAllocationService requester = new RemoteAllocationService(serviceA, 0);
        RemoteAllocationService owner = new RemoteAllocationService(serviceB, 1 << 20);
        serviceB.start();
        Link link = a.connect(b.address());
        RemoteRegion region = requester.allocate(link, 64 * 1024, RemoteAccess.READ_WRITE, TIMEOUT);
        assertEquals(64 * 1024, region.length());
        assertEquals(RemoteAccess.READ_WRITE, region.access());
        assertEquals(b.endpointId(), region.ownerId());
        assertEquals(64 * 1024, owner.grantedBytes());
        try (LocalRegion source = a.allocate(64 * 1024, RemoteAccess.NONE);
             LocalRegion back = a.allocate(64 * 1024, RemoteAccess.NONE)) {
            for (int i = 0; i < 8 * 1024; i++) {
                source.segment().set(ValueLayout.JAVA_LONG, 8L * i, i * 31L + 7);
            }
            link.awaitCompletion(link.write(source, 0, region, 0, 64 * 1024));
            LocalRegion granted = owner.granted(region);
            assertNotNull(granted);
            assertEquals(-1, granted.segment().mismatch(source.segment()), "the owner holds the written bytes");
            link.awaitCompletion(link.read(region, 0, back, 0, 64 * 1024));
            assertEquals(-1, back.segment().mismatch(source.segment()), "read back what was written");
        }
        requester.free(link, region, TIMEOUT);
        assertEquals(0, owner.grantedBytes());
        assertNull(owner.granted(region));
        RemoteAllocationException twice = assertThrows(RemoteAllocationException.class,
                () -> requester.free(link, region, TIMEOUT));
        assertTrue(twice.getMessage().contains("region unknown"), twice.getMessage());
    }

    @Test
    void theOwnerRefusesBeyondItsLimitAndFreesOnlyForTheRequester() {
        RemoteAllocationService requester = new RemoteAllocationService(serviceA, 0);
        RemoteAllocationService owner = new RemoteAllocationService(serviceB, 1 << 20);
        serviceB.start();
        Link link = a.connect(b.address());
        RemoteAllocationException tooLarge = assertThrows(RemoteAllocationException.class,
                () -> requester.allocate(link, 2 << 20, RemoteAccess.WRITE, TIMEOUT));
        assertTrue(tooLarge.getMessage().contains("over the remote-allocation limit")
                && tooLarge.getMessage().contains("limit 1048576 bytes"), tooLarge.getMessage());
        RemoteRegion first = requester.allocate(link, 600 * 1024, RemoteAccess.WRITE, TIMEOUT);
        RemoteAllocationException total = assertThrows(RemoteAllocationException.class,
                () -> requester.allocate(link, 600 * 1024, RemoteAccess.WRITE, TIMEOUT));
        assertTrue(total.getMessage().contains("614400 bytes granted"), total.getMessage());
        assertThrows(IllegalArgumentException.class, () -> requester.allocate(link, 4096, RemoteAccess.NONE, TIMEOUT));

        try (Transport c = fixture().open(); ServiceDispatcher serviceC = new ServiceDispatcher(c).start()) {
            RemoteAllocationService stranger = new RemoteAllocationService(serviceC, 0);
            RemoteAllocationException foreign = assertThrows(RemoteAllocationException.class,
                    () -> stranger.free(c.connect(b.address()), first, TIMEOUT));
            assertTrue(foreign.getMessage().contains("region unknown"), foreign.getMessage());
        }
        assertEquals(600 * 1024, owner.grantedBytes());
        requester.free(link, first, TIMEOUT);
        assertEquals(0, owner.grantedBytes());
    }

    @Test
    void aDeadOwnerEndsTheRequestWithPeerFailure() throws Exception {
        RemoteAllocationService requester = new RemoteAllocationService(serviceA, 0);
        new RemoteAllocationService(serviceB, 1 << 20); // registered, but its service thread never runs: no answer
        Link link = a.connect(b.address());
        Thread killer = Thread.ofPlatform().start(() -> {
            try {
                Thread.sleep(300);
            } catch (InterruptedException e) {
                return;
            }
            b.close();
        });
        long started = System.nanoTime();
        assertThrows(PeerFailedException.class, () -> requester.allocate(link, 4096, RemoteAccess.WRITE, TIMEOUT));
        assertTrue(System.nanoTime() - started < TIMEOUT.toNanos(), "failure seen before the timeout");
        killer.join();
        assertThrows(PeerFailedException.class, () -> requester.allocate(link, 4096, RemoteAccess.WRITE, TIMEOUT),
                "an owner known dead fails at once");
    }

    // ------------------------------------------------------------------------------------------------ fabric

    static final AtomicLong RECEIVED_CRC = new AtomicLong();

    private static long crc(MemorySegment bytes) {
        CRC32 crc = new CRC32();
        crc.update(bytes.asByteBuffer());
        return crc.getValue();
    }

    @Test
    void aFabricAllocatesInAnotherProcessAndCallsNameTheRegion() throws Exception {
        Map<String, String> config = new HashMap<>(fixture().config());
        config.put(RemoteAllocationService.LIMIT_KEY, Long.toString(256 * 1024));
        TransportFixture limited = () -> config;
        long started = System.nanoTime();
        try (LocalJob job = new LocalJob(limited, 2, 1, MessengerConfig.defaults())) {
            Fabric zero = job.rank(0);
            Fabric one = job.rank(1);
            one.startHandlerThreads();
            long joined = System.nanoTime();
            RemoteRegion region = zero.allocateRemote(1, 64 * 1024, RemoteAccess.WRITE);
            System.out.printf("remote allocation: job formed in %d ms, allocateRemote took %d ms%n",
                    (joined - started) / 1_000_000, (System.nanoTime() - joined) / 1_000_000);
            assertEquals(64 * 1024, region.length());
            try (LocalRegion source = zero.allocate(64 * 1024, RemoteAccess.NONE)) {
                for (int i = 0; i < 64 * 1024; i++) {
                    source.segment().set(ValueLayout.JAVA_BYTE, i, (byte) (i * 13 + 1));
                }
                RECEIVED_CRC.set(-1);
                assertTrue(zero.callBuffer(new ThreadId(1, 0), bytes -> RECEIVED_CRC.set(crc(bytes)), source, 0, region,
                        0, 64 * 1024, null));
                zero.flush();
                long deadline = System.nanoTime() + TIMEOUT.toNanos();
                while (RECEIVED_CRC.get() == -1 && System.nanoTime() < deadline) {
                    Thread.sleep(1);
                }
                assertEquals(crc(source.segment()), RECEIVED_CRC.get(), "rank 1 ran the call on the written bytes");
            }
            RemoteAllocationException refused = assertThrows(RemoteAllocationException.class,
                    () -> zero.allocateRemote(1, 512 * 1024, RemoteAccess.WRITE));
            assertTrue(refused.getMessage().contains("limit 262144 bytes"), refused.getMessage());
            zero.freeRemote(1, region);
            assertThrows(RemoteAllocationException.class, () -> zero.freeRemote(1, region));
            assertThrows(IllegalArgumentException.class, () -> zero.allocateRemote(2, 64, RemoteAccess.WRITE));
            System.out.printf("remote allocation: test body done after %d ms%n", (System.nanoTime() - started) / 1_000_000);
        }
        System.out.printf("remote allocation: job closed after %d ms%n", (System.nanoTime() - started) / 1_000_000);
    }
}
