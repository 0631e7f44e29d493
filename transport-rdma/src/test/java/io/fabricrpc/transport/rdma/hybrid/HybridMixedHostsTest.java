package io.fabricrpc.transport.rdma.hybrid;

import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.transport.Transport;
import io.fabricrpc.transport.Transports;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Three endpoints: {@code a} and {@code b} on one host, {@code c} on another (by {@code hybrid.hostId}). */
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class HybridMixedHostsTest {
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final long DEADLINE_NANOS = 10_000_000_000L;

    private Transport a;
    private Transport b;
    private Transport c;

    @BeforeEach
    void open() {
        a = Transports.open(HybridFixture.config("mixed-host-1"));
        b = Transports.open(HybridFixture.config("mixed-host-1"));
        c = Transports.open(HybridFixture.config("mixed-host-2"));
    }

    @AfterEach
    void close() {
        c.close();
        b.close();
        a.close();
    }

    @Test
    void sameHostPeersGetSharedMemoryAndOthersRdma() {
        assertEquals("shm", HybridTransport.pathOf(a.connect(b.address())));
        assertEquals("shm", HybridTransport.pathOf(b.connect(a.address())));
        assertEquals("shm", HybridTransport.pathOf(a.connect(a.address())));
        assertEquals("rdma", HybridTransport.pathOf(a.connect(c.address())));
        assertEquals("rdma", HybridTransport.pathOf(c.connect(a.address())));
        assertEquals("rdma", HybridTransport.pathOf(b.connect(c.address())));
        assertEquals("rdma", HybridTransport.pathOf(c.connect(b.address())));
        assertEquals(b.endpointId(), a.connect(b.address()).peerId());
        assertEquals(c.endpointId(), a.connect(c.address()).peerId());
    }

    @Test
    void oneRegionIsWrittenAndReadOverBothPaths() {
        try (LocalRegion shared = a.allocate(4096, RemoteAccess.READ_WRITE);
             LocalRegion fromB = b.allocate(4096, RemoteAccess.READ_WRITE);
             LocalRegion fromC = c.allocate(4096, RemoteAccess.READ_WRITE)) {
            for (int i = 0; i < 64; i++) {
                fromB.segment().set(ValueLayout.JAVA_BYTE, i, (byte) (i + 1));
                fromC.segment().set(ValueLayout.JAVA_BYTE, i, (byte) (i + 101));
            }
            Link bToA = b.connect(a.address());
            Link cToA = c.connect(a.address());
            // Into a's one region: b over shared memory, c over RDMA; each publishes with a flag after its bytes.
            bToA.awaitCompletion(bToA.writeAndFlag(fromB, 0, shared.remote(), 128, 64, 0, 1));
            cToA.awaitCompletion(cToA.writeAndFlag(fromC, 0, shared.remote(), 256, 64, 8, 2));
            awaitFlag(shared.segment(), 0, 1);
            awaitFlag(shared.segment(), 8, 2);
            for (int i = 0; i < 64; i++) {
                assertEquals((byte) (i + 1), shared.segment().get(ValueLayout.JAVA_BYTE, 128 + i), "b's byte " + i);
                assertEquals((byte) (i + 101), shared.segment().get(ValueLayout.JAVA_BYTE, 256 + i), "c's byte " + i);
            }
            // Both read a's region back into their own memory.
            bToA.awaitCompletion(bToA.read(shared.remote(), 256, fromB, 1024, 64));
            cToA.awaitCompletion(cToA.read(shared.remote(), 128, fromC, 1024, 64));
            for (int i = 0; i < 64; i++) {
                assertEquals((byte) (i + 101), fromB.segment().get(ValueLayout.JAVA_BYTE, 1024 + i), "b read " + i);
                assertEquals((byte) (i + 1), fromC.segment().get(ValueLayout.JAVA_BYTE, 1024 + i), "c read " + i);
            }
            // And a writes back into each of them, on the link kind each pair has.
            Link aToB = a.connect(b.address());
            Link aToC = a.connect(c.address());
            aToB.awaitCompletion(aToB.writeLong(fromB.remote(), 2048, 77));
            aToC.awaitCompletion(aToC.writeLong(fromC.remote(), 2048, 88));
            awaitFlag(fromB.segment(), 2048, 77);
            awaitFlag(fromC.segment(), 2048, 88);
        }
    }

    @Test
    void messagesFlowBothWaysOnEachPath() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment payload = arena.allocate(16);
            payload.set(ValueLayout.JAVA_LONG, 0, 4242);
            assertTrue(a.connect(b.address()).send(11, payload, 0, 8));
            assertTrue(a.connect(c.address()).send(12, payload, 0, 8));
            for (Transport receiver : List.of(b, c)) {
                List<String> got = new ArrayList<>();
                pollUntil(receiver, 1, (from, type, message) -> {
                    assertEquals(a.endpointId(), from.peerId());
                    got.add(type + ":" + message.get(ValueLayout.JAVA_LONG_UNALIGNED, 0) + ":"
                            + HybridTransport.pathOf(from));
                    payload.set(ValueLayout.JAVA_LONG, 8, receiver.endpointId());
                    assertTrue(from.send(20 + type, payload, 8, 8)); // reply on the link the message came on
                });
                assertEquals(List.of(receiver == b ? "11:4242:shm" : "12:4242:rdma"), got);
            }
            List<String> replies = new ArrayList<>();
            pollUntil(a, 2, (from, type, message) -> {
                assertEquals(from.peerId(), message.get(ValueLayout.JAVA_LONG_UNALIGNED, 0));
                replies.add(type + ":" + HybridTransport.pathOf(from));
            });
            assertTrue(replies.containsAll(List.of("31:shm", "32:rdma")) && replies.size() == 2, replies.toString());
        }
    }

    @Test
    void theHybridLayerAddsNoAllocationPerOperation() {
        try (LocalRegion targetA = a.allocate(4096, RemoteAccess.WRITE);
             LocalRegion sourceB = b.allocate(4096, RemoteAccess.NONE);
             LocalRegion sourceC = c.allocate(4096, RemoteAccess.NONE)) {
            assertNoAddedAllocation(b.connect(a.address()), (HybridLocalRegion) sourceB, targetA.remote());
            assertNoAddedAllocation(c.connect(a.address()), (HybridLocalRegion) sourceC, targetA.remote());
        }
    }

    private static void assertNoAddedAllocation(Link link, HybridLocalRegion source, RemoteRegion target) {
        HybridLink hybrid = (HybridLink) link;
        Link inner = hybrid.inner();
        LocalRegion innerSource = hybrid.innerKind().equals("shm") ? source.shm : source.rdma;
        RemoteRegion innerTarget = hybrid.innerRegion(target, "test"); // resolves and caches, as the first write would
        long viaInner = allocatedPerOperation(() -> inner.awaitCompletion(
                inner.writeAndFlag(innerSource, 0, innerTarget, 64, 64, 8, 1)));
        long viaHybrid = allocatedPerOperation(() -> link.awaitCompletion(
                link.writeAndFlag(source, 0, target, 64, 64, 8, 1)));
        // Slack below one object (16+ bytes): a translation or wrapper per operation would exceed it.
        assertTrue(viaHybrid <= viaInner + 8, hybrid.innerKind() + ": " + viaHybrid + " bytes allocated per operation "
                + "through the hybrid link, " + viaInner + " through its inner link");
    }

    /**
     * Bytes this thread allocates per run of {@code operation}: the least of three windows of 2000 runs after 2000
     * warm-up runs, so a window that overlaps JIT recompilation on a busy host does not decide.
     */
    private static long allocatedPerOperation(Runnable operation) {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        for (int i = 0; i < 2000; i++) {
            operation.run();
        }
        long least = Long.MAX_VALUE;
        for (int window = 0; window < 3; window++) {
            long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 2000; i++) {
                operation.run();
            }
            least = Math.min(least, (threads.getCurrentThreadAllocatedBytes() - before) / 2000);
        }
        return least;
    }

    private static void pollUntil(Transport transport, int messages, io.fabricrpc.transport.MessageHandler handler) {
        long start = System.nanoTime();
        int got = 0;
        while (got < messages) {
            got += transport.pollMessages(handler, messages - got);
            assertTrue(System.nanoTime() - start < DEADLINE_NANOS, "got " + got + " of " + messages + " messages");
            Thread.onSpinWait();
        }
    }

    private static void awaitFlag(MemorySegment segment, long offset, long value) {
        long start = System.nanoTime();
        while ((long) LONG.getAcquire(segment, offset) != value) {
            assertTrue(System.nanoTime() - start < DEADLINE_NANOS, "flag at " + offset + " never became " + value);
            Thread.onSpinWait();
        }
    }
}
