package io.fabricrpc.transport.rdma.firehose;

import io.fabricrpc.messaging.ServiceDispatcher;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.transport.Transports;
import io.fabricrpc.transport.rdma.RdmaTestSupport;
import io.fabricrpc.transport.rdma.spi.RdmaTransport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Firehoses on real verbs (Soft-RoCE in the guest): the local cache registers real memory regions and writes from
 * pinned user memory land at the peer; remote firehoses map, hit and move buckets of the peer's exposed segment
 * through the move service call, and the data is verified in the peer's memory.
 */
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class RdmaFirehoseTest {
    private static final int BUCKET = 64 * 1024;
    private static RdmaTransport a;
    private static RdmaTransport b;
    private static Link aToB;
    private static ServiceDispatcher serviceA;
    private static ServiceDispatcher serviceB;
    private static final Arena ARENA = Arena.ofShared();

    /** Counts the bytes actually registered at the device and checks the bound at every registration. */
    static final class Bounded implements Registrar<LocalRegion> {
        final Registrar<LocalRegion> device;
        final long bound;
        final AtomicLong bytes = new AtomicLong();
        final ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();

        Bounded(Registrar<LocalRegion> device, long bound) {
            this.device = device;
            this.bound = bound;
        }

        @Override
        public LocalRegion register(long address, long length) {
            long now = bytes.addAndGet(length);
            if (now > bound) {
                violations.add("device holds " + now + " bytes > bound " + bound);
            }
            return device.register(address, length);
        }

        @Override
        public void deregister(LocalRegion registration) {
            long length = registration.length();
            device.deregister(registration);
            bytes.addAndGet(-length);
        }
    }

    @BeforeAll
    static void open() throws Exception {
        Map<String, String> config = Map.of("fabric.transport", "rdma", "rdma.bindAddress",
                RdmaTestSupport.rdmaAddress().getHostAddress());
        a = (RdmaTransport) Transports.open(config);
        b = (RdmaTransport) Transports.open(config);
        serviceA = new ServiceDispatcher(a).start();
        serviceB = new ServiceDispatcher(b).start();
        aToB = a.connect(b.address());
    }

    @AfterAll
    static void close() {
        if (serviceA != null) {
            serviceA.close();
            serviceB.close();
        }
        if (a != null) {
            a.close();
            b.close();
        }
    }

    private static MemorySegment userMemory(int buckets) {
        return ARENA.allocate((long) buckets * BUCKET, BUCKET); // bucket-aligned whole buckets: all mapped
    }

    private static void fill(MemorySegment s, long seed) {
        for (long i = 0; i + 8 <= s.byteSize(); i += 8) {
            s.set(ValueLayout.JAVA_LONG_UNALIGNED, i, seed * 1_000_003 + i);
        }
    }

    @Test
    void pinnedUserMemoryIsWrittenToThePeerAndVictimsAreReused() {
        FirehoseCache.Config config = new FirehoseCache.Config(BUCKET, 2L * BUCKET, 2L * BUCKET,
                TimeUnit.SECONDS.toNanos(5));
        Bounded device = new Bounded(RdmaFirehose.registrar(a, RemoteAccess.NONE), config.boundBytes());
        MemorySegment user = userMemory(8);
        fill(user, 7);
        try (FirehoseCache<LocalRegion> cache = new FirehoseCache<>(config, device);
             LocalRegion target = b.allocate(4L * BUCKET, RemoteAccess.WRITE)) {
            MemorySegment straddling = user.asSlice(BUCKET - 1000, 3000); // buckets 0 and 1
            FirehoseHandle<LocalRegion> h = cache.pin(straddling);
            assertEquals(2, h.bucketCount());
            assertEquals(2, cache.misses());
            assertNotEquals(RdmaTransport.localKey(h.registration(0)), RdmaTransport.localKey(h.registration(1)));
            assertEquals(h.bucketAddress(0), h.registration(0).remote().address(), "the MR starts at the bucket");
            aToB.awaitCompletion(RdmaFirehose.write(aToB, h, 0, target.remote(), 100, 3000));
            assertEquals(-1, target.segment().asSlice(100, 3000).mismatch(straddling), "bytes at the peer");
            LocalRegion first = h.registration(0);
            cache.release(h);
            assertEquals(2L * BUCKET, cache.victimBytes());

            FirehoseHandle<LocalRegion> again = cache.pin(user.asSlice(10, 100)); // a victim comes back
            assertSame(first, again.registration(0), "no new registration for a victim hit");
            assertEquals(1, cache.victimHits());
            cache.release(again);

            for (int i = 2; i < 8; i++) { // walk the rest: evictions keep the bound
                FirehoseHandle<LocalRegion> w = cache.pin(user.asSlice((long) i * BUCKET + 8, 4096));
                aToB.awaitCompletion(RdmaFirehose.write(aToB, w, 0, target.remote(), (long) (i % 4) * BUCKET, 4096));
                assertEquals(-1, target.segment().asSlice((long) (i % 4) * BUCKET, 4096)
                        .mismatch(user.asSlice((long) i * BUCKET + 8, 4096)));
                cache.release(w);
                assertTrue(cache.registeredBytes() <= config.boundBytes());
            }
            assertEquals(8, cache.misses());
            assertEquals(6, cache.evictions());
            assertTrue(device.violations.isEmpty(), device.violations.toString());
            assertEquals(cache.registeredBytes(), device.bytes.get());
            FirehoseHandle<LocalRegion> held1 = cache.pin(user.asSlice(0, 8));
            FirehoseHandle<LocalRegion> held2 = cache.pin(user.asSlice(BUCKET, 8));
            FirehoseHandle<LocalRegion> held3 = cache.pin(user.asSlice(2L * BUCKET, 8));
            FirehoseHandle<LocalRegion> held4 = cache.pin(user.asSlice(3L * BUCKET, 8));
            assertNull(cache.tryPin(user.asSlice(4L * BUCKET, 8)), "bound of 4 buckets reached");
            assertThrows(IllegalArgumentException.class, () -> cache.release(h), "already released");
            for (var x : List.of(held1, held2, held3, held4)) {
                cache.release(x);
            }
        }
        assertEquals(0, device.bytes.get(), "close deregistered every region");
    }

    @Test
    void eightThreadsPinRealRegionsConcurrently() throws Exception {
        int threads = 8;
        int ops = Integer.getInteger("fabricrpc.firehose.rdma.ops", 150);
        FirehoseCache.Config config = new FirehoseCache.Config(BUCKET, 6L * BUCKET, 2L * BUCKET,
                TimeUnit.SECONDS.toNanos(20));
        Bounded device = new Bounded(RdmaFirehose.registrar(a, RemoteAccess.NONE), config.boundBytes());
        MemorySegment user = userMemory(24);
        fill(user, 3);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
        try (FirehoseCache<LocalRegion> cache = new FirehoseCache<>(config, device);
             LocalRegion target = b.allocate((long) threads * 8192, RemoteAccess.WRITE)) {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                done.add(pool.submit(() -> {
                    SplittableRandom random = new SplittableRandom(id);
                    for (int op = 0; op < ops; op++) {
                        long offset = random.nextLong(user.byteSize() - 8192);
                        int length = 1 + random.nextInt(8192);
                        MemorySegment s = user.asSlice(offset, length);
                        FirehoseHandle<LocalRegion> h = random.nextBoolean() ? cache.pin(s) : cache.tryPin(s);
                        if (cache.registeredBytes() > config.boundBytes() || device.bytes.get() > config.boundBytes()) {
                            problems.add("bound exceeded: " + cache.registeredBytes() + ", device " + device.bytes.get());
                        }
                        if (h == null) {
                            continue;
                        }
                        if (op % 10 == 0) { // real writes through the registrations, verified at the peer
                            aToB.awaitCompletion(RdmaFirehose.write(aToB, h, 0, target.remote(), id * 8192L, length));
                            if (target.segment().asSlice(id * 8192L, length).mismatch(s) != -1) {
                                problems.add("thread " + id + " op " + op + ": data differs at the peer");
                            }
                        }
                        cache.release(h);
                    }
                    return null;
                }));
            }
            for (var f : done) {
                f.get(120, TimeUnit.SECONDS); // a deadlock fails here, bounded
            }
            assertTrue(problems.isEmpty(), problems.toString());
            assertTrue(device.violations.isEmpty(), device.violations.toString());
            assertEquals(cache.victimBytes(), cache.registeredBytes());
            assertEquals(cache.registeredBytes(), device.bytes.get());
        } finally {
            pool.shutdownNow();
        }
        assertEquals(0, device.bytes.get());
    }

    @Test
    void remoteFirehosesHitMissAndMoveWithDataAtThePeer() {
        int firehoses = 2;
        MemorySegment exposed = userMemory(8);
        FirehoseCache.Config serverConfig = new FirehoseCache.Config(BUCKET, 4L * BUCKET, 2L * BUCKET,
                TimeUnit.SECONDS.toNanos(5));
        Bounded serverDevice = new Bounded(RdmaFirehose.registrar(b, RemoteAccess.WRITE), serverConfig.boundBytes());
        RemoteFirehoses client = new RemoteFirehoses(firehoses, BUCKET, TimeUnit.SECONDS.toNanos(10));
        MemorySegment source = userMemory(2);
        fill(source, 11);
        try (FirehoseCache<LocalRegion> serverCache = new FirehoseCache<>(serverConfig, serverDevice);
             FirehoseServer server = new FirehoseServer(exposed, serverCache, firehoses);
             FirehoseCache<LocalRegion> local = RdmaFirehose.localCache(a, FirehoseCache.Config.of(4L * BUCKET, 0))) {
            serviceB.register(FirehoseMessages.MOVE_REQUEST, server::onMessage);
            serviceA.register(FirehoseMessages.MOVE_REPLY, client::onMessage);
            FirehoseHandle<LocalRegion> src = local.pin(source);

            client.put(aToB, src, 0, 100, 5000); // bucket 0: placed
            assertEquals(1, client.misses());
            client.put(aToB, src, 5000, 100 + 5000, 1000); // bucket 0 again: one-sided
            assertEquals(1, client.hits());
            client.put(aToB, src, 8, 3L * BUCKET + 16, 4096); // bucket 3: placed (second firehose)
            assertEquals(0, client.moves());
            assertEquals(2, server.mappingsOf(a.endpointId()));
            client.put(aToB, src, 16, 5L * BUCKET, 2048); // bucket 5: moves the least recently used (bucket 0)
            assertEquals(1, client.moves());
            assertEquals(2, server.mappingsOf(a.endpointId()), "F bounds the peer's pins for us");
            assertEquals(0, serverCache.referenceCount(exposed.address()), "bucket 0 released at the peer");
            client.put(aToB, src, 0, 7L * BUCKET - 500, 1500); // spans buckets 6 and 7: two more moves
            assertEquals(5, client.misses());
            assertEquals(3, client.moves());

            assertEquals(-1, exposed.asSlice(100, 6000).mismatch(source.asSlice(0, 6000)));
            assertEquals(-1, exposed.asSlice(3L * BUCKET + 16, 4096).mismatch(source.asSlice(8, 4096)));
            assertEquals(-1, exposed.asSlice(5L * BUCKET, 2048).mismatch(source.asSlice(16, 2048)));
            assertEquals(-1, exposed.asSlice(7L * BUCKET - 500, 1500).mismatch(source.asSlice(0, 1500)));

            FirehoseException refused = assertThrows(FirehoseException.class,
                    () -> client.put(aToB, src, 0, 8L * BUCKET, 16));
            assertTrue(refused.getMessage().contains("out of the exposed range"), refused.getMessage());
            assertTrue(serverDevice.violations.isEmpty(), serverDevice.violations.toString());
            local.release(src);
        }
        assertEquals(0, serverDevice.bytes.get());
    }

    @Test
    void concurrentPutsShareFewFirehoses() throws Exception {
        int threads = 4;
        int puts = Integer.getInteger("fabricrpc.firehose.rdma.puts", 40);
        MemorySegment exposed = userMemory(16);
        FirehoseCache.Config serverConfig = new FirehoseCache.Config(BUCKET, 4L * BUCKET, 2L * BUCKET,
                TimeUnit.SECONDS.toNanos(5));
        RemoteFirehoses client = new RemoteFirehoses(3, BUCKET, TimeUnit.SECONDS.toNanos(20));
        MemorySegment source = userMemory(1);
        fill(source, 5);
        // Own transports and dispatchers: a message type has one handler per dispatcher.
        Map<String, String> config = Map.of("fabric.transport", "rdma", "rdma.bindAddress",
                RdmaTestSupport.rdmaAddress().getHostAddress());
        try (RdmaTransport c = (RdmaTransport) Transports.open(config);
             RdmaTransport d = (RdmaTransport) Transports.open(config);
             ServiceDispatcher serviceC = new ServiceDispatcher(c);
             ServiceDispatcher serviceD = new ServiceDispatcher(d);
             FirehoseCache<LocalRegion> serverCache = new FirehoseCache<>(serverConfig,
                     RdmaFirehose.registrar(d, RemoteAccess.WRITE));
             FirehoseServer server = new FirehoseServer(exposed, serverCache, 3);
             FirehoseCache<LocalRegion> local = RdmaFirehose.localCache(c, FirehoseCache.Config.of(2L * BUCKET, 0))) {
            serviceD.register(FirehoseMessages.MOVE_REQUEST, server::onMessage);
            serviceC.register(FirehoseMessages.MOVE_REPLY, client::onMessage);
            serviceC.start();
            serviceD.start();
            Link cToD = c.connect(d.address());
            FirehoseHandle<LocalRegion> src = local.pin(source);
            ExecutorService workers = Executors.newFixedThreadPool(threads);
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int id = t;
                    done.add(workers.submit(() -> {
                        SplittableRandom random = new SplittableRandom(100 + id);
                        for (int p = 0; p < puts; p++) {
                            long bucket = random.nextInt(16);
                            long at = bucket * BUCKET + id * 4096L; // each thread owns 4 KiB of every bucket
                            client.put(cToD, src, id * 4096L, at, 4096);
                        }
                        return null;
                    }));
                }
                for (var f : done) {
                    f.get(120, TimeUnit.SECONDS);
                }
            } finally {
                workers.shutdownNow();
            }
            assertTrue(server.mappingsOf(c.endpointId()) <= 3);
            assertEquals((long) threads * puts, client.hits() + client.misses(), "one mapping per put");
            assertTrue(client.moves() > 0, "16 buckets through 3 firehoses must move some");
            for (int bucket = 0; bucket < 16; bucket++) { // every thread's slice, where it was written
                for (int t = 0; t < threads; t++) {
                    MemorySegment at = exposed.asSlice(bucket * (long) BUCKET + t * 4096L, 4096);
                    if (at.get(ValueLayout.JAVA_LONG_UNALIGNED, 0) != 0) {
                        assertEquals(-1, at.mismatch(source.asSlice(t * 4096L, 4096)), "bucket " + bucket + " thread " + t);
                    }
                }
            }
            local.release(src);
        }
    }
}
