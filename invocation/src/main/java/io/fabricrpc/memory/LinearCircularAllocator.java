package io.fabricrpc.memory;

import io.fabricrpc.api.MemoryExhaustedException;

import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;

/**
 * Seriema's linear-circular allocator: the ring of a {@link CircularAllocator}, handing out variable-size
 * <em>segments</em> inside units by bumping a pointer through the current unit, and moving to the next unit of the
 * ring when a segment does not fit the rest of it. A unit is reused once it is no longer current, every segment
 * in it was released, and the tag of the last operation that read from it has completed.
 *
 * <p>A segment is named by a {@code long} handle (unit id and offset in the unit), so allocation and release
 * allocate no Java objects; {@link #region(long)} and {@link #offset(long)} turn a handle into what transport
 * operations take. Segments start 8-byte aligned. Releasing more segments of a unit than were allocated in it is
 * detected; releasing one segment twice in place of another is not (there is no per-segment bookkeeping).
 *
 * <p>Not thread-safe: one allocator per thread (per (thread, link) for the lowest latency).
 */
public final class LinearCircularAllocator {
    private static final int ALIGNMENT = 8;

    private final UnitRing ring;
    private final int unitBytes;
    private Unit current;
    private int fill;

    /**
     * @throws io.fabricrpc.api.TransportException if the pool cannot obtain a slab
     */
    public LinearCircularAllocator(SlabPool pool, RingConfig config) {
        this.ring = new UnitRing(pool, config);
        this.unitBytes = config.unitBytes();
    }

    /**
     * A segment of {@code bytes}, or -1 if it does not fit the current unit and the ring cannot move on (at its
     * maximum, oldest unit busy). Never waits.
     *
     * @throws IllegalArgumentException if {@code bytes} is not positive or is larger than a unit
     */
    public long tryAllocate(int bytes) {
        int aligned = alignedSize(bytes);
        if (current == null || fill + aligned > unitBytes) {
            if (!nextUnit(false)) {
                return -1;
            }
        }
        return take(aligned);
    }

    /**
     * A segment of {@code bytes}, waiting up to {@link RingConfig#maxWait()} for the oldest unit when the ring is at
     * its maximum.
     *
     * @throws IllegalArgumentException if {@code bytes} is not positive or is larger than a unit
     * @throws MemoryExhaustedException if no unit became free in time, or the oldest still has segments not released
     * @throws io.fabricrpc.api.PeerFailedException if the link of the awaited operation fails
     */
    public long allocate(int bytes) {
        int aligned = alignedSize(bytes);
        if (current == null || fill + aligned > unitBytes) {
            nextUnit(true);
        }
        return take(aligned);
    }

    private int alignedSize(int bytes) {
        if (bytes <= 0 || bytes > unitBytes) {
            throw new IllegalArgumentException("segment of " + bytes + " bytes refused: segments must be 1.."
                    + unitBytes + " bytes (the unit size of this linear-circular allocator)");
        }
        return (bytes + ALIGNMENT - 1) & -ALIGNMENT; // unitBytes is a multiple of 64, so this stays <= unitBytes
    }

    private boolean nextUnit(boolean wait) {
        Unit sealed = current;
        if (sealed != null) {
            sealed.outstanding--; // the allocator's own hold: the unit can be reused once its segments are released
        }
        Unit next;
        try {
            next = wait ? ring.advance("linear-circular allocation") : ring.tryAdvance();
        } catch (RuntimeException e) {
            if (sealed != null) {
                sealed.outstanding++;
            }
            throw e;
        }
        if (next == null) {
            if (sealed != null) {
                sealed.outstanding++; // stays current (full): the next call tries again
            }
            return false;
        }
        current = next;
        current.outstanding = 1;
        fill = 0;
        return true;
    }

    private long take(int aligned) {
        long handle = (long) current.id << 32 | fill;
        fill += aligned;
        current.outstanding++;
        return handle;
    }

    /** The slab region holding the segment. */
    public LocalRegion region(long handle) {
        return unitOf(handle).region();
    }

    /** Where the segment starts in {@link #region(long)}. */
    public long offset(long handle) {
        return unitOf(handle).offset() + (int) handle;
    }

    /**
     * Releases a segment, tagging its unit with the last operation that read from it.
     *
     * @throws IllegalStateException if the unit has no unreleased segment
     */
    public void release(long handle, Link link, long ticket) {
        Unit unit = checkedRelease(handle);
        unit.release(link, ticket);
    }

    /** Releases a segment that no pending operation reads from. */
    public void release(long handle) {
        checkedRelease(handle).release();
    }

    private Unit checkedRelease(long handle) {
        Unit unit = unitOf(handle);
        int held = unit == current ? 1 : 0;
        if (unit.outstanding <= held) {
            throw new IllegalStateException("segment at offset " + (int) handle + " of unit " + unit.id
                    + " released, but every segment of that unit was already released");
        }
        return unit;
    }

    private Unit unitOf(long handle) {
        int offset = (int) handle;
        if (handle < 0 || offset < 0 || offset >= unitBytes) {
            throw new IllegalArgumentException("not a segment handle: " + handle);
        }
        return ring.unit((int) (handle >>> 32));
    }

    /** Units in the ring now. */
    public int unitCount() {
        return ring.count();
    }

    public RingConfig config() {
        return ring.config;
    }
}
