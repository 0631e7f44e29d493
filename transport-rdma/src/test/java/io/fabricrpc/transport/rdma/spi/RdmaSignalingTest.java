package io.fabricrpc.transport.rdma.spi;

import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.transport.Transport;
import io.fabricrpc.transport.Transports;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Selective signaling on a QP shared by many posting threads, on real verbs: a small send queue and a short signal
 * interval so that the queue is full most of the time. Each thread recycles a ring of source units by the ticket of
 * their last write (the flush-number discipline); if a unit were rewritten before its write completed, or the send
 * queue overflowed, the receiver would see a wrong pattern or the link would fail.
 */
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RdmaSignalingTest {
    private static final int THREADS = 8;
    private static final int UNITS = 4; // per thread: few, so that units come round while their writes are in flight
    private static final int UNIT = 256;
    private static final int WRITES = Integer.getInteger("fabricrpc.signaling.writes", 600);

    private final List<Transport> endpoints = new ArrayList<>();

    @AfterEach
    void close() {
        endpoints.forEach(Transport::close);
    }

    private Transport open(Map<String, String> extra) {
        Map<String, String> config = new HashMap<>(RdmaFixture.INSTANCE.config());
        config.putAll(extra);
        Transport t = Transports.open(config);
        endpoints.add(t);
        return t;
    }

    @Test
    void sharedQpUnderManyPostersNeverReusesABufferEarlyNorOverflows() throws Exception {
        Map<String, String> small = Map.of("rdma.sendQueueDepth", "16", "rdma.signalInterval", "4");
        Transport sender = open(small);
        Transport receiver = open(small);
        LocalRegion target = receiver.allocate((long) THREADS * WRITES * UNIT, RemoteAccess.WRITE);
        Link link = sender.connect(receiver.address());
        CyclicBarrier start = new CyclicBarrier(THREADS);
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            int thread = t;
            workers.add(CompletableFuture.runAsync(() -> post(sender, link, target, thread, start),
                    r -> Thread.ofPlatform().name("poster-" + thread).start(r)));
        }
        for (CompletableFuture<Void> w : workers) {
            w.get(100, TimeUnit.SECONDS);
        }
        MemorySegment memory = target.segment();
        for (int t = 0; t < THREADS; t++) {
            for (int i = 0; i < WRITES; i++) {
                long base = ((long) t * WRITES + i) * UNIT;
                for (int b = 0; b < UNIT; b += 8) {
                    long expected = pattern(t, i, b);
                    long actual = memory.get(ValueLayout.JAVA_LONG_UNALIGNED, base + b);
                    if (actual != expected) {
                        throw new AssertionError("thread " + t + " write " + i + " byte " + b + ": expected "
                                + Long.toHexString(expected) + ", found " + Long.toHexString(actual)
                                + " (a source unit was reused before its write completed)");
                    }
                }
            }
        }
        RdmaLink rdma = (RdmaLink) link;
        long posted = rdma.postedCount();
        long signaled = rdma.signaledCount();
        assertTrue(link.isAlive());
        assertTrue(posted >= (long) THREADS * WRITES, "posted " + posted);
        // Every 4th is signaled, plus flushes that waiters request; far from one signal per request.
        assertTrue(signaled * 2 < posted, "signaled " + signaled + " of " + posted + " requests");
    }

    private static void post(Transport sender, Link link, LocalRegion target, int thread, CyclicBarrier start) {
        try (LocalRegion source = sender.allocate((long) UNITS * UNIT, RemoteAccess.NONE)) {
            MemorySegment units = source.segment();
            long[] tags = new long[UNITS];
            start.await(30, TimeUnit.SECONDS);
            for (int i = 0; i < WRITES; i++) {
                int unit = i % UNITS;
                if (tags[unit] != 0 && !link.isComplete(tags[unit])) {
                    link.awaitCompletion(tags[unit]); // the unit's last write must be done before we overwrite it
                }
                long at = (long) unit * UNIT;
                for (int b = 0; b < UNIT; b += 8) {
                    units.set(ValueLayout.JAVA_LONG_UNALIGNED, at + b, pattern(thread, i, b));
                }
                tags[unit] = link.write(source, at, target.remote(), ((long) thread * WRITES + i) * UNIT, UNIT);
            }
            link.awaitCompletion(link.writeLong(target.remote(), ((long) thread * WRITES) * UNIT,
                    pattern(thread, 0, 0))); // a last ordered write: every earlier one of this thread is placed
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    private static long pattern(int thread, int write, int offset) {
        return ((long) thread << 48) ^ ((long) write << 16) ^ offset ^ 0x5A5A_0000_0000_0000L;
    }

    @Test
    void idleLinkIsProbedAndStaysAlive() throws Exception {
        Map<String, String> fast = Map.of("rdma.heartbeatMillis", "50");
        Transport a = open(fast);
        Transport b = open(fast);
        RdmaLink link = (RdmaLink) a.connect(b.address());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (link.probes() < 3 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertTrue(link.probes() >= 3, "probes on an idle link after waiting: " + link.probes());
        assertTrue(link.isAlive());
        link.checkAlive();
        long before = link.probes();
        LocalRegion region = b.allocate(64, RemoteAccess.WRITE);
        for (int i = 0; i < 50; i++) {
            link.awaitCompletion(link.writeLong(region.remote(), 0, i)); // traffic: the beat leaves a busy link alone
        }
        assertEquals(49L, region.segment().get(ValueLayout.JAVA_LONG, 0));
        assertTrue(link.isAlive());
        assertTrue(link.probes() - before <= 3, "probes while busy: " + (link.probes() - before));
    }
}
