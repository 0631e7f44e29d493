package io.fabricrpc.transport.rdma.firehose;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The cache's concurrency and accounting logic over a counting registrar (no device: these run on the host too; the
 * RDMA behaviour is {@link RdmaFirehoseTest}'s). Addresses are synthetic: the registrar never touches memory.
 */
class FirehoseCacheTest {
    private static final int BUCKET = 4096;
    private static final long BASE = 1L << 40;

    /** Stands in for the device: checks the bound at every registration and records the order of deregistrations. */
    static final class CountingRegistrar implements Registrar<CountingRegistrar.Reg> {
        static final class Reg {
            final long address;
            volatile boolean live = true;

            Reg(long address) {
                this.address = address;
            }
        }

        final long bound;
        final AtomicLong deviceBytes = new AtomicLong();
        final AtomicInteger registrations = new AtomicInteger();
        final ConcurrentLinkedQueue<Long> deregistered = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<String> violations = new ConcurrentLinkedQueue<>();
        volatile long registerDelayNanos;

        CountingRegistrar(long bound) {
            this.bound = bound;
        }

        @Override
        public Reg register(long address, long length) {
            long now = deviceBytes.addAndGet(length);
            if (now > bound) {
                violations.add("device holds " + now + " > bound " + bound);
            }
            registrations.incrementAndGet();
            if (registerDelayNanos > 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(registerDelayNanos);
            }
            return new Reg(address);
        }

        @Override
        public void deregister(Reg registration) {
            if (!registration.live) {
                violations.add("double deregistration of 0x" + Long.toHexString(registration.address));
            }
            registration.live = false;
            deviceBytes.addAndGet(-BUCKET);
            deregistered.add(registration.address);
        }
    }

    private static MemorySegment seg(long bucket, long offset, long length) {
        return MemorySegment.ofAddress(BASE + bucket * BUCKET + offset).reinterpret(length);
    }

    private static FirehoseCache<CountingRegistrar.Reg> cache(CountingRegistrar registrar, int maxBuckets,
                                                              int victimBuckets, long timeoutMillis) {
        return new FirehoseCache<>(new FirehoseCache.Config(BUCKET, (long) maxBuckets * BUCKET,
                (long) victimBuckets * BUCKET, TimeUnit.MILLISECONDS.toNanos(timeoutMillis)), registrar);
    }

    @Test
    void countsHitsMissesAndVictimHits() {
        CountingRegistrar dev = new CountingRegistrar(4L * BUCKET);
        try (var cache = cache(dev, 2, 2, 1000)) {
            var a = cache.tryPin(seg(0, 100, 200));
            assertEquals(1, cache.misses());
            var b = cache.tryPin(seg(0, 1000, 10)); // same bucket, in use: lock-free hit
            assertEquals(1, cache.hits());
            assertEquals(2, cache.referenceCount(BASE));
            cache.release(a);
            cache.release(b);
            assertEquals(0, cache.referenceCount(BASE));
            assertEquals(BUCKET, cache.victimBytes());
            var c = cache.pin(seg(0, 0, BUCKET)); // victim comes back without a registration
            assertEquals(1, cache.victimHits());
            assertEquals(1, dev.registrations.get());
            var d = cache.pin(seg(0, BUCKET - 8, 16)); // spans buckets 0 and 1
            assertEquals(2, d.bucketCount());
            assertEquals(0, d.bucketIndexOf(7));
            assertEquals(1, d.bucketIndexOf(8));
            assertEquals(BASE + BUCKET, d.bucketAddress(1));
            assertEquals(2, cache.misses());
            cache.release(c);
            cache.release(d);
        }
        assertEquals(0, dev.deviceBytes.get(), "close deregisters everything");
        assertTrue(dev.violations.isEmpty(), dev.violations.toString());
    }

    @Test
    void aHitTakesNoLockAndAllocatesOnlyItsHandle() {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        CountingRegistrar dev = new CountingRegistrar(4L * BUCKET);
        try (var cache = cache(dev, 2, 2, 1000)) {
            var holder = cache.pin(seg(0, 0, 64)); // keeps bucket 0 in use: later pins of it are lock-free hits
            MemorySegment same = seg(0, 128, 256);
            for (int i = 0; i < 50_000; i++) { // warm-up, so the loop below runs compiled
                cache.release(cache.tryPin(same));
            }
            // The least of several rounds: a round that overlaps JIT recompilation on a busy host reads high.
            int pins = 20_000;
            long perPin = Long.MAX_VALUE;
            for (int round = 0; round < 5 && perPin > 40; round++) {
                long before = threads.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < pins; i++) {
                    cache.release(cache.tryPin(same));
                }
                perPin = Math.min(perPin, (threads.getCurrentThreadAllocatedBytes() - before) / pins);
            }
            System.out.println("bytes allocated per firehose hit: " + perPin);
            assertTrue(perPin <= 40, "a hit allocates its handle only (about 32 bytes), measured " + perPin);
            cache.release(holder);
            assertEquals(1, dev.registrations.get());
        }
    }

    @Test
    void victimsLeaveOldestFirst() {
        CountingRegistrar dev = new CountingRegistrar(4L * BUCKET);
        try (var cache = cache(dev, 2, 2, 1000)) {
            for (int b = 0; b < 3; b++) {
                cache.release(cache.tryPin(seg(b, 0, 8)));
            }
            // Three victims exceed MAXVICTIM = 2: the oldest (bucket 0) went.
            assertArrayEquals(new long[]{BASE + BUCKET, BASE + 2L * BUCKET}, cache.victimAddresses());
            assertEquals(List.of(BASE), new ArrayList<>(dev.deregistered));
            var held3 = cache.tryPin(seg(3, 0, 8));
            var held4 = cache.tryPin(seg(4, 0, 8)); // bound reached: 2 victims + 2 in use
            assertEquals(4L * BUCKET, cache.registeredBytes());
            var held5 = cache.tryPin(seg(5, 0, 8)); // needs room: bucket 1, the oldest victim, goes
            assertNotNull(held5);
            assertEquals(List.of(BASE, BASE + BUCKET), new ArrayList<>(dev.deregistered));
            assertArrayEquals(new long[]{BASE + 2L * BUCKET}, cache.victimAddresses());
            var held2 = cache.tryPin(seg(2, 0, 8)); // the last victim is a hit
            assertNotNull(held2);
            assertEquals(1, cache.victimHits());
            assertNull(cache.tryPin(seg(6, 0, 8)), "4 buckets in use, no victim: no room");
            assertEquals(4L * BUCKET, cache.registeredBytes());
            for (var h : List.of(held2, held3, held4, held5)) {
                cache.release(h);
            }
        }
        assertTrue(dev.violations.isEmpty(), dev.violations.toString());
    }

    @Test
    void pinTimesOutWithTheBoundInTheMessage() {
        CountingRegistrar dev = new CountingRegistrar(2L * BUCKET);
        try (var cache = cache(dev, 1, 1, 100)) {
            var a = cache.pin(seg(0, 0, 8));
            var b = cache.pin(seg(1, 0, 8));
            FirehoseException e = assertThrows(FirehoseException.class, () -> cache.pin(seg(2, 0, 8)));
            assertTrue(e.getMessage().contains("8192 of 8192 bytes registered"), e.getMessage());
            assertEquals(0, cache.waitingPinners());
            assertThrows(IllegalArgumentException.class, () -> cache.pin(seg(3, 0, 3L * BUCKET)),
                    "more buckets than the bound can never fit");
            cache.release(a);
            cache.release(b);
        }
    }

    @Test
    void releaseOfUnknownOrReleasedHandleIsRejected() {
        CountingRegistrar dev = new CountingRegistrar(8L * BUCKET);
        try (var one = cache(dev, 4, 4, 100); var other = cache(dev, 4, 4, 100)) {
            var h = one.pin(seg(0, 0, 8));
            IllegalArgumentException foreign = assertThrows(IllegalArgumentException.class, () -> other.release(h));
            assertTrue(foreign.getMessage().contains("another cache"), foreign.getMessage());
            one.release(h);
            IllegalArgumentException twice = assertThrows(IllegalArgumentException.class, () -> one.release(h));
            assertTrue(twice.getMessage().contains("already released"), twice.getMessage());
            assertThrows(IllegalArgumentException.class, () -> one.release(null));
            assertEquals(0, one.referenceCount(BASE), "the rejected releases changed nothing");
        }
    }

    @Test
    void waitingPinnersAreServedInArrivalOrder() throws Exception {
        CountingRegistrar dev = new CountingRegistrar(2L * BUCKET);
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try (var cache = cache(dev, 2, 0, 10_000)) {
            var a = cache.pin(seg(0, 0, 8));
            var b = cache.pin(seg(1, 0, 8));
            ConcurrentLinkedQueue<Integer> served = new ConcurrentLinkedQueue<>();
            List<Future<FirehoseHandle<CountingRegistrar.Reg>>> waiting = new ArrayList<>();
            for (int w = 0; w < 3; w++) {
                int id = w;
                waiting.add(pool.submit(() -> {
                    var h = cache.pin(seg(10 + id, 0, 8));
                    served.add(id);
                    return h;
                }));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (cache.waitingPinners() < w + 1) { // queue them one after the other
                    assertTrue(System.nanoTime() < deadline, "waiter " + w + " did not queue");
                    Thread.onSpinWait();
                }
            }
            assertNull(cache.tryPin(seg(20, 0, 8)), "a tryPin miss does not overtake the queue");
            var hit = cache.tryPin(seg(0, 16, 8));
            assertNotNull(hit, "a hit needs no room and does not queue");
            cache.release(hit);
            cache.release(a); // room for one: the first waiter
            var first = waiting.get(0).get(5, TimeUnit.SECONDS);
            cache.release(b);
            var second = waiting.get(1).get(5, TimeUnit.SECONDS);
            cache.release(first);
            var third = waiting.get(2).get(5, TimeUnit.SECONDS);
            assertEquals(List.of(0, 1, 2), new ArrayList<>(served));
            cache.release(second);
            cache.release(third);
        } finally {
            pool.shutdownNow();
        }
        assertTrue(dev.violations.isEmpty(), dev.violations.toString());
    }

    @Test
    void concurrentMissesOnOneBucketRegisterItOnce() throws Exception {
        CountingRegistrar dev = new CountingRegistrar(4L * BUCKET);
        dev.registerDelayNanos = TimeUnit.MILLISECONDS.toNanos(20); // a wide REGISTERING window
        int threads = 8;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (var cache = cache(dev, 2, 2, 5_000)) {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<FirehoseHandle<CountingRegistrar.Reg>>> pins = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int offset = t * 8;
                pins.add(pool.submit(() -> {
                    start.await();
                    return cache.pin(seg(0, offset, 8));
                }));
            }
            start.countDown();
            for (var f : pins) {
                var h = f.get(10, TimeUnit.SECONDS);
                assertTrue(h.registration(0).live, "every pinner sees the registered bucket");
                cache.release(h);
            }
            assertEquals(1, dev.registrations.get());
            assertEquals(1, cache.misses());
            assertEquals(threads - 1, cache.hits());
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * 8 threads pin and release random segments (1-2 buckets) of a working set four times the bound, mixing
     * {@code tryPin} and {@code pin}; after every operation the accounted and the device bytes are within the bound
     * and every held bucket is still registered. A thread holds up to 2 pins between {@code tryPin}s (which never
     * wait) and none when it calls {@code pin}, so waiters only wait for threads that will release: no pin may time
     * out, and the test ends within its time limit (a deadlock fails it).
     */
    @Test
    void stressKeepsTheBoundAndNeverDropsAReferencedBucket() throws Exception {
        int threads = 8;
        int opsPerThread = Integer.getInteger("fabricrpc.firehose.stress.ops", 2000);
        int maxBuckets = 16;
        int victimBuckets = 8;
        long bound = (long) (maxBuckets + victimBuckets) * BUCKET;
        int workingSet = 96;
        CountingRegistrar dev = new CountingRegistrar(bound);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
        try (var cache = cache(dev, maxBuckets, victimBuckets, 20_000)) {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                long seed = 42 + t;
                done.add(pool.submit(() -> {
                    SplittableRandom random = new SplittableRandom(seed);
                    List<FirehoseHandle<CountingRegistrar.Reg>> held = new ArrayList<>();
                    for (int op = 0; op < opsPerThread; op++) {
                        boolean blocking = random.nextInt(3) == 0;
                        int limit = blocking ? 1 : 2;
                        while (held.size() >= limit || (!held.isEmpty() && random.nextBoolean())) {
                            var h = held.remove(random.nextInt(held.size()));
                            check(h, problems);
                            cache.release(h);
                            checkBound(cache, dev, bound, problems);
                        }
                        int bucket = random.nextInt(workingSet);
                        long offset = random.nextInt(BUCKET);
                        long length = 1 + random.nextInt(BUCKET); // 1 or 2 buckets
                        MemorySegment s = seg(bucket, offset, length);
                        var h = blocking ? cache.pin(s) : cache.tryPin(s);
                        checkBound(cache, dev, bound, problems);
                        if (h != null) {
                            check(h, problems);
                            held.add(h);
                        }
                    }
                    for (var h : held) {
                        cache.release(h);
                    }
                    return null;
                }));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            for (var f : done) {
                long remaining = deadline - System.nanoTime();
                try {
                    f.get(Math.max(1, remaining), TimeUnit.NANOSECONDS);
                } catch (java.util.concurrent.TimeoutException e) {
                    fail("pinners did not finish within 60 s (deadlock or livelock?): " + cache);
                }
            }
            assertTrue(problems.isEmpty(), problems.toString());
            assertTrue(dev.violations.isEmpty(), dev.violations.toString());
            assertEquals(cache.victimBytes(), cache.registeredBytes(), "only victims remain registered");
            assertEquals(cache.registeredBytes(), dev.deviceBytes.get());
            assertTrue(cache.misses() > 0 && cache.hits() > 0 && cache.evictions() > 0, cache.toString());
        } finally {
            pool.shutdownNow();
        }
        assertEquals(0, dev.deviceBytes.get());
    }

    private static void check(FirehoseHandle<CountingRegistrar.Reg> h, ConcurrentLinkedQueue<String> problems) {
        for (int i = 0; i < h.bucketCount(); i++) {
            if (!h.registration(i).live) {
                problems.add("bucket 0x" + Long.toHexString(h.bucketAddress(i)) + " deregistered while pinned");
            }
        }
    }

    private static void checkBound(FirehoseCache<?> cache, CountingRegistrar dev, long bound,
                                   ConcurrentLinkedQueue<String> problems) {
        long accounted = cache.registeredBytes();
        long device = dev.deviceBytes.get();
        if (accounted > bound || device > bound) {
            problems.add("bound " + bound + " exceeded: accounted " + accounted + ", device " + device);
        }
    }
}
