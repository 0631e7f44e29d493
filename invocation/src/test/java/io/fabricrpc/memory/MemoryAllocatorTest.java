package io.fabricrpc.memory;

import io.fabricrpc.api.MemoryExhaustedException;

import io.fabricrpc.transport.DelayedLink;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.transport.Transport;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The allocators of {@code io.fabricrpc.memory} over a real transport; every transport module runs it. */
public abstract class MemoryAllocatorTest {
    protected abstract TransportFixture fixture();

    private static final int STRESS_WRITES = Integer.getInteger("fabricrpc.memory.stress.writes", 3000);

    private Transport a;
    private Transport b;
    private Link link;
    private SlabPool pool;

    @BeforeEach
    void open() {
        a = fixture().open();
        b = fixture().open();
        link = a.connect(b.address());
        pool = new SlabPool(a, RemoteAccess.NONE, 64 * 1024);
    }

    @AfterEach
    void close() {
        pool.close();
        b.close();
        a.close();
    }

    /** Word k of the bytes written in round i: any mix-up of rounds or positions shows. */
    private static long word(long round, int k) {
        return round * 1_000_003L + k;
    }

    private static void fill(MemorySegment segment, long offset, int bytes, long round) {
        for (int k = 0; k < bytes / 8; k++) {
            segment.set(ValueLayout.JAVA_LONG_UNALIGNED, offset + 8L * k, word(round, k));
        }
    }

    private static String check(MemorySegment segment, long offset, int bytes, long round) {
        for (int k = 0; k < bytes / 8; k++) {
            long seen = segment.get(ValueLayout.JAVA_LONG_UNALIGNED, offset + 8L * k);
            if (seen != word(round, k)) {
                return "round " + round + ", word " + k + ": " + seen + " (round " + seen / 1_000_003L + ")";
            }
        }
        return null;
    }

    // ------------------------------------------------------------------------------------------------- circular

    @Test
    void aUnitComesRoundAgainOnlyAfterItsTagCompletes() {
        CircularAllocator ring = new CircularAllocator(pool, new RingConfig(256, 4, 4, RingConfig.Growth.LINEAR,
                Duration.ofMillis(50)));
        DelayedLink delayed = new DelayedLink(link);
        try (LocalRegion target = b.allocate(4 * 256, RemoteAccess.WRITE)) {
            List<Unit> units = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                Unit unit = ring.tryAllocate();
                assertNotNull(unit, "unit " + i);
                fill(unit.segment(), 0, 256, i);
                unit.release(delayed, delayed.write(unit.region(), unit.offset(), target.remote(), 256L * i, 256));
                units.add(unit);
            }
            assertEquals(4, new HashSet<>(units).size(), "four distinct units");
            assertNull(ring.tryAllocate(), "every unit waits for its write");
            MemoryExhaustedException full = assertThrows(MemoryExhaustedException.class, ring::allocate);
            assertTrue(full.getMessage().contains("4 units of 256 bytes"), full.getMessage());
            delayed.deliver();
            for (int i = 0; i < 4; i++) {
                assertSame(units.get(i), ring.tryAllocate(), "ring order after completion");
                assertEquals(null, check(target.segment(), 256L * i, 256, i));
            }
            assertNull(ring.tryAllocate(), "held units are not handed out");
            assertThrows(MemoryExhaustedException.class, ring::allocate, "a held oldest unit fails at once");
            units.get(0).release();
            assertThrows(IllegalStateException.class, () -> units.get(0).release());
            assertSame(units.get(0), ring.allocate());
        }
    }

    @Test
    void circularUnitsRecycleUnderStressAndThePeerSeesEveryWriteIntact() {
        int unitBytes = 256;
        CircularAllocator ring = new CircularAllocator(pool, RingConfig.of(unitBytes, 2, 8));
        int writes = STRESS_WRITES;
        try (LocalRegion target = b.allocate((long) writes * unitBytes, RemoteAccess.WRITE)) {
            long last = 0;
            for (int i = 0; i < writes; i++) {
                Unit unit = ring.allocate();
                fill(unit.segment(), 0, unitBytes, i);
                last = link.write(unit.region(), unit.offset(), target.remote(), (long) i * unitBytes, unitBytes);
                unit.release(link, last);
            }
            link.awaitCompletion(last);
            for (int i = 0; i < writes; i++) {
                assertEquals(null, check(target.segment(), (long) i * unitBytes, unitBytes, i));
            }
            assertTrue(ring.unitCount() <= 8, "ring grew past its maximum: " + ring.unitCount());
        }
    }

    @Test
    void ringsGrowLinearlyOrExponentiallyUpToTheirMaximum() {
        CircularAllocator linear = new CircularAllocator(pool, new RingConfig(128, 3, 10, RingConfig.Growth.LINEAR,
                Duration.ZERO));
        List<Integer> counts = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            assertNotNull(linear.tryAllocate());
            counts.add(linear.unitCount());
        }
        assertEquals(List.of(3, 3, 3, 6, 6, 6, 9, 9, 9, 10), counts);
        assertNull(linear.tryAllocate());
        MemoryExhaustedException full = assertThrows(MemoryExhaustedException.class, linear::allocate);
        assertTrue(full.getMessage().contains("maximum of 10 units of 128 bytes (1280 bytes)"), full.getMessage());

        CircularAllocator exponential = new CircularAllocator(pool, RingConfig.of(128, 2, 9));
        counts.clear();
        Set<Long> places = new HashSet<>();
        for (int i = 0; i < 9; i++) {
            Unit unit = exponential.tryAllocate();
            counts.add(exponential.unitCount());
            assertTrue(places.add(unit.region().remote().regionId() << 32 | unit.offset()), "units overlap");
        }
        assertEquals(List.of(2, 2, 4, 4, 8, 8, 8, 8, 9), counts);
        assertNull(exponential.tryAllocate());
    }

    // ------------------------------------------------------------------------------------------ linear-circular

    @Test
    void linearCircularPacksSegmentsIntoUnitsAndRefusesOversizedOnes() {
        LinearCircularAllocator ring = new LinearCircularAllocator(pool, new RingConfig(1024, 2, 2,
                RingConfig.Growth.LINEAR, Duration.ofMillis(20)));
        long s1 = ring.allocate(100);
        long s2 = ring.allocate(200);
        long s3 = ring.allocate(300);
        assertSame(ring.region(s1), ring.region(s3));
        assertEquals(ring.offset(s1) + 104, ring.offset(s2), "8-byte aligned bump");
        assertEquals(ring.offset(s2) + 200, ring.offset(s3));
        long s4 = ring.allocate(500); // 608 + 500 > 1024: next unit
        assertTrue(ring.offset(s4) != ring.offset(s1) + 608, "moved to the next unit");
        IllegalArgumentException oversized = assertThrows(IllegalArgumentException.class, () -> ring.allocate(1025));
        assertTrue(oversized.getMessage().contains("1025") && oversized.getMessage().contains("1024"),
                oversized.getMessage());

        DelayedLink delayed = new DelayedLink(link);
        ring.release(s1);
        ring.release(s2);
        ring.release(s3, delayed, 1);
        delayed.write(ring.region(s3), ring.offset(s3), b.allocate(4096, RemoteAccess.WRITE).remote(), 0, 300);
        assertEquals(-1, ring.tryAllocate(600), "first unit still waits for its write, ring at maximum");
        delayed.deliver();
        long s5 = ring.tryAllocate(600);
        assertEquals(ring.offset(s1), ring.offset(s5), "first unit reused once its write completed");
        assertEquals(-1, ring.tryAllocate(600), "second unit still has a segment out");
        ring.release(s4);
        assertThrows(IllegalStateException.class, () -> ring.release(s4));
        assertTrue(ring.tryAllocate(600) >= 0);
    }

    @Test
    void linearCircularSegmentsRecycleUnderStressAndThePeerSeesEveryWriteIntact() {
        LinearCircularAllocator ring = new LinearCircularAllocator(pool, RingConfig.of(1024, 2, 16));
        int writes = STRESS_WRITES;
        int maxSegment = 512;
        Random random = new Random(42);
        try (LocalRegion target = b.allocate((long) writes * maxSegment, RemoteAccess.WRITE)) {
            int[] sizes = new int[writes];
            long last = 0;
            for (int i = 0; i < writes; i++) {
                sizes[i] = 8 * (1 + random.nextInt(maxSegment / 8));
                long segment = ring.allocate(sizes[i]);
                fill(ring.region(segment).segment(), ring.offset(segment), sizes[i], i);
                last = link.write(ring.region(segment), ring.offset(segment), target.remote(), (long) i * maxSegment,
                        sizes[i]);
                ring.release(segment, link, last);
            }
            link.awaitCompletion(last);
            for (int i = 0; i < writes; i++) {
                assertEquals(null, check(target.segment(), (long) i * maxSegment, sizes[i], i));
            }
            assertTrue(ring.unitCount() <= 16);
        }
    }

    // ------------------------------------------------------------------------------------------------- best fit

    @Test
    void bestFitPicksTheSmallestFittingBlockAndCoalescesNeighbours() {
        BestFitAllocator allocator = new BestFitAllocator(pool); // 64 KiB slabs
        List<BestFitAllocator.Allocation> blocks = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            blocks.add(allocator.allocate(4000)); // rounded to 4032
        }
        assertEquals(1, allocator.slabCount());
        long unit = blocks.get(0).size();
        assertEquals(4032, unit);
        allocator.free(blocks.get(1));
        allocator.free(blocks.get(4));
        allocator.free(blocks.get(5)); // merges with 4
        assertEquals(3, allocator.freeBlocks(), "hole 1, hole 4+5, the slab's tail");
        BestFitAllocator.Allocation exact = allocator.allocate(4032);
        assertEquals(blocks.get(1).offset(), exact.offset(), "exact fit preferred over larger holes");
        BestFitAllocator.Allocation pair = allocator.allocate(2 * 4032);
        assertEquals(blocks.get(4).offset(), pair.offset(), "coalesced hole fits a double block");
        assertEquals(1, allocator.freeBlocks(), "only the tail is left");

        BestFitAllocator.Allocation large = allocator.allocate(100_000); // larger than a slab: its own region
        assertTrue(large.region().length() >= 100_000);
        assertEquals(1, allocator.slabCount());
        int regions = pool.regionCount();
        allocator.free(large);
        assertEquals(regions - 1, pool.regionCount(), "dedicated region closed on free");

        for (int i : new int[]{0, 2, 3, 6, 7}) {
            allocator.free(blocks.get(i));
        }
        allocator.free(exact);
        allocator.free(pair);
        assertEquals(1, allocator.freeBlocks(), "everything coalesced back into one block");
        assertEquals(64 * 1024, allocator.freeBytes());
        assertEquals(64 * 1024, allocator.largestFreeBlock());

        IllegalStateException twice = assertThrows(IllegalStateException.class, () -> allocator.free(exact));
        assertTrue(twice.getMessage().contains("double free"), twice.getMessage());
        BestFitAllocator other = new BestFitAllocator(pool);
        BestFitAllocator.Allocation theirs = other.allocate(64);
        IllegalArgumentException foreign = assertThrows(IllegalArgumentException.class, () -> allocator.free(theirs));
        assertTrue(foreign.getMessage().contains("foreign free"), foreign.getMessage());
    }

    @Test
    void bestFitServesEightThreadsWithoutOverlap() throws Exception {
        SlabPool slabs = new SlabPool(a, RemoteAccess.NONE, 256 * 1024);
        BestFitAllocator allocator = new BestFitAllocator(slabs);
        int threads = 8;
        int rounds = Integer.getInteger("fabricrpc.memory.bestfit.rounds", 3000);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            workers.add(Thread.ofPlatform().start(() -> {
                Random random = new Random(id);
                List<BestFitAllocator.Allocation> held = new ArrayList<>();
                List<Long> rounds0 = new ArrayList<>();
                try {
                    for (int round = 0; round < rounds; round++) {
                        if (held.size() < 16 && (held.isEmpty() || random.nextBoolean())) {
                            int bytes = 8 * (1 + random.nextInt(random.nextInt(10) == 0 ? 40_000 : 500));
                            BestFitAllocator.Allocation allocation = allocator.allocate(bytes);
                            long tag = (long) id << 40 | round;
                            fill(allocation.segment(), 0, bytes, tag);
                            held.add(allocation);
                            rounds0.add(tag << 20 | bytes);
                        } else {
                            int victim = random.nextInt(held.size());
                            BestFitAllocator.Allocation allocation = held.remove(victim);
                            long packed = rounds0.remove(victim);
                            String bad = check(allocation.segment(), 0, (int) (packed & 0xFFFFF), packed >>> 20);
                            if (bad != null) {
                                throw new AssertionError("thread " + id + ": block overwritten: " + bad);
                            }
                            allocator.free(allocation);
                        }
                    }
                    for (int i = 0; i < held.size(); i++) {
                        long packed = rounds0.get(i);
                        String bad = check(held.get(i).segment(), 0, (int) (packed & 0xFFFFF), packed >>> 20);
                        if (bad != null) {
                            throw new AssertionError("thread " + id + ": block overwritten: " + bad);
                        }
                        allocator.free(held.get(i));
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        for (Thread worker : workers) {
            worker.join(120_000);
            assertTrue(!worker.isAlive(), "worker still running");
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        assertEquals(0, allocator.liveAllocations());
        assertEquals(allocator.slabCount(), allocator.freeBlocks(), "every slab coalesced back into one block");
        assertEquals(allocator.slabCount() * 256L * 1024, allocator.freeBytes());
        assertEquals(allocator.slabCount(), slabs.regionCount(), "every dedicated region was closed");
        slabs.close();
    }
}
