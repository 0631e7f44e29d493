package io.fabricrpc.transport.rdma.spi;

import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.transport.Transport;
import io.fabricrpc.transport.Transports;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;

import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The send queue of one link on real verbs: WR numbering, the signaling cadence, the flush that completes an unsignaled
 * tail, and the flush number ({@code completed}) covering every earlier ticket. A queue of 16 with a signal interval
 * of 4, and no heartbeat, so that each count below is exact.
 */
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RdmaSendQueueTest {
    private static final int SQ_DEPTH = 16;
    private static final int SIGNAL_INTERVAL = 4;

    private final List<Transport> endpoints = new ArrayList<>();

    @AfterEach
    void close() {
        endpoints.forEach(Transport::close);
    }

    private Transport open() {
        Map<String, String> config = new HashMap<>(RdmaFixture.INSTANCE.config());
        config.putAll(Map.of("rdma.sendQueueDepth", String.valueOf(SQ_DEPTH),
                "rdma.signalInterval", String.valueOf(SIGNAL_INTERVAL), "rdma.heartbeatMillis", "0"));
        Transport t = Transports.open(config);
        endpoints.add(t);
        return t;
    }

    @Test
    void signalsEveryIntervalthRequestAndASignaledCompletionCoversEarlierTickets() {
        Transport a = open();
        Transport b = open();
        LocalRegion target = b.allocate(64, RemoteAccess.WRITE);
        RdmaLink link = (RdmaLink) a.connect(b.address());
        RdmaSendQueue queue = link.sendQueue();
        long posted = queue.postedCount(); // the HELLO, signaled: the tail starts signaled
        long signaled = queue.signaledCount();
        long first = link.writeLong(target.remote(), 0, 1);
        assertEquals(posted + 1, first, "tickets are WR numbers");
        long last = first;
        for (int i = 2; i <= 2 * SIGNAL_INTERVAL; i++) {
            last = link.writeLong(target.remote(), 0, i);
        }
        assertEquals(posted + 2 * SIGNAL_INTERVAL, last);
        assertEquals(posted + 2 * SIGNAL_INTERVAL, queue.postedCount());
        assertEquals(signaled + 2, queue.signaledCount(), "one signaled request per interval");
        link.awaitCompletion(last); // the last is signaled: no flush needed
        assertEquals(last, queue.postedCount(), "awaiting a signaled ticket posted a flush");
        assertTrue(queue.lvCompleted() >= last);
        for (long t = first; t <= last; t++) {
            assertTrue(link.isComplete(t), "ticket " + t + " below the flush number " + queue.lvCompleted());
        }
        assertEquals(2L * SIGNAL_INTERVAL, target.segment().get(ValueLayout.JAVA_LONG, 0));
    }

    @Test
    void anUnsignaledTailIsCompletedByOneFlush() throws InterruptedException {
        Transport a = open();
        Transport b = open();
        LocalRegion target = b.allocate(64, RemoteAccess.WRITE);
        RdmaLink link = (RdmaLink) a.connect(b.address());
        RdmaSendQueue queue = link.sendQueue();
        long ticket = link.writeLong(target.remote(), 8, 42); // right after the signaled HELLO: unsignaled
        long signaled = queue.signaledCount();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!link.isComplete(ticket) && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        assertTrue(link.isComplete(ticket), "ticket " + ticket + " never completed");
        assertEquals(ticket + 1, queue.postedCount(), "exactly one flush READ after the tail");
        assertEquals(signaled + 1, queue.signaledCount());
        assertTrue(queue.lvCompleted() >= ticket + 1, "the flush's completion is the flush number");
        assertEquals(42L, target.segment().get(ValueLayout.JAVA_LONG, 8));
        assertThrows(IllegalArgumentException.class, () -> link.awaitCompletion(ticket + 10),
                "a ticket that was never issued");
    }

    @Test
    void aFullWindowIsReapedBeforeItOverflows() {
        Transport a = open();
        Transport b = open();
        LocalRegion target = b.allocate(64, RemoteAccess.WRITE);
        RdmaLink link = (RdmaLink) a.connect(b.address());
        RdmaSendQueue queue = link.sendQueue();
        long last = 0;
        for (int i = 1; i <= 20 * SQ_DEPTH; i++) {
            last = link.writeLong(target.remote(), 16, i); // never waits: reserve reaps when the window is full
            assertTrue(last - queue.lvCompleted() <= SQ_DEPTH, "ticket " + last + " posted beyond the window");
        }
        link.awaitCompletion(last);
        assertTrue(link.isAlive());
        assertEquals(20L * SQ_DEPTH, target.segment().get(ValueLayout.JAVA_LONG, 16));
    }

    @Test
    void aLoopbackLinkSignalsAndCompletesEveryRequest() {
        Transport a = open();
        LocalRegion target = a.allocate(64, RemoteAccess.WRITE);
        RdmaLink link = (RdmaLink) a.connect(a.address());
        RdmaSendQueue queue = link.sendQueue();
        long posted = queue.postedCount();
        long signaled = queue.signaledCount();
        for (int i = 1; i <= 2 * SIGNAL_INTERVAL; i++) {
            long ticket = link.writeLong(target.remote(), 0, i);
            assertTrue(queue.lvCompleted() >= ticket, "a loopback write returned before it completed");
            assertEquals(i, target.segment().get(ValueLayout.JAVA_LONG, 0));
        }
        assertEquals(queue.postedCount() - posted, queue.signaledCount() - signaled);
    }
}
