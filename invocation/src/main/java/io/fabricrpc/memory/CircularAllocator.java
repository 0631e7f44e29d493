package io.fabricrpc.memory;

import io.fabricrpc.api.MemoryExhaustedException;

/**
 * Seriema's circular allocator: a ring of fixed-size {@link Unit units} carved from the slabs of a {@link SlabPool}.
 * Units come out in ring order; the allocator moves on only while the oldest unit is released and its tag (the
 * (link, ticket) of the last operation that read from it) has completed, so freeing needs no bookkeeping beyond the
 * tag and one completion frees every unit tagged with an earlier ticket of that link (§4.1's flush-number
 * recycling). When the oldest unit is still busy the ring grows ({@link RingConfig.Growth linearly or
 * exponentially}) up to {@link RingConfig#maxUnits()}.
 *
 * <p>{@link #tryAllocate()} and {@link #allocate()} allocate no Java objects (growth does). Not thread-safe: one
 * allocator per thread, and for the lowest latency one per (thread, link), since a unit waiting on a slow link
 * holds back every unit behind it. The units' memory belongs to the pool and is freed when the pool closes.
 */
public final class CircularAllocator {
    private final UnitRing ring;

    /**
     * Creates the ring's first {@link RingConfig#initialUnits()} units.
     *
     * @throws io.fabricrpc.api.TransportException if the pool cannot obtain a slab
     */
    public CircularAllocator(SlabPool pool, RingConfig config) {
        this.ring = new UnitRing(pool, config);
    }

    /**
     * The next unit, or null if the ring is at its maximum and the oldest unit is still held or its operation has
     * not completed. Never waits.
     */
    public Unit tryAllocate() {
        Unit unit = ring.tryAdvance();
        if (unit != null) {
            unit.outstanding = 1;
        }
        return unit;
    }

    /**
     * The next unit, waiting up to {@link RingConfig#maxWait()} for the oldest unit's operation to complete when the
     * ring is at its maximum.
     *
     * @throws MemoryExhaustedException if no unit became free in time, or the oldest unit was never released
     * @throws io.fabricrpc.api.PeerFailedException if the link of the awaited operation fails
     */
    public Unit allocate() {
        Unit unit = ring.advance("circular allocation");
        unit.outstanding = 1;
        return unit;
    }

    /** Units in the ring now (grows up to {@link RingConfig#maxUnits()}). */
    public int unitCount() {
        return ring.count();
    }

    public RingConfig config() {
        return ring.config;
    }
}
