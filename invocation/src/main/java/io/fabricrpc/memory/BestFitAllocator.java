package io.fabricrpc.memory;

import io.fabricrpc.api.LocalRegion;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Seriema's general allocator: best fit over the slabs of a {@link SlabPool}. Free blocks are kept by size (the
 * smallest block that fits is split) and by position in their slab (a freed block merges with free neighbours), so
 * fragmentation stays bounded by the allocation pattern rather than growing with time. A request larger than a slab
 * gets a region of its own, closed again when it is freed. Sizes are rounded up to 64 bytes and blocks start
 * 64-byte aligned in their slab. Reused memory is not zeroed.
 *
 * <p>Thread-safe: one lock around the free lists (this is not a hot-path allocator; use the circular ones there).
 */
public final class BestFitAllocator {
    private static final long ALIGNMENT = 64;

    private final SlabPool pool;
    private final List<LocalRegion> slabs = new ArrayList<>();
    /** Free blocks by (size, slab, offset): the ceiling of a request's size is its best fit. */
    private final TreeSet<Block> bySize = new TreeSet<>(Comparator.comparingLong(Block::size)
            .thenComparingInt(Block::slab).thenComparingLong(Block::offset));
    /** Free blocks of each slab by offset, to find the neighbours of a freed block. */
    private final List<TreeMap<Long, Block>> byOffset = new ArrayList<>();
    private final Set<Allocation> live = new HashSet<>();
    private long freeBytes;

    private record Block(int slab, long offset, long size) {
    }

    /** A block handed out by {@link #allocate}; identity matters (free it once, with the allocator that made it). */
    public static final class Allocation {
        private final BestFitAllocator owner;
        private final LocalRegion region;
        private final int slab; // -1 for a dedicated region
        private final long offset;
        private final long size;

        private Allocation(BestFitAllocator owner, LocalRegion region, int slab, long offset, long size) {
            this.owner = owner;
            this.region = region;
            this.slab = slab;
            this.offset = offset;
            this.size = size;
        }

        /** The region to name in transport operations. */
        public LocalRegion region() {
            return region;
        }

        /** Where the block starts in {@link #region()}. */
        public long offset() {
            return offset;
        }

        /** The block's size (the request rounded up to 64 bytes). */
        public long size() {
            return size;
        }

        /** The block's bytes (a new slice on every call). */
        public MemorySegment segment() {
            return region.segment().asSlice(offset, size);
        }

        @Override
        public String toString() {
            return "Allocation[" + size + " bytes at " + offset + " of " + region + "]";
        }
    }

    public BestFitAllocator(SlabPool pool) {
        this.pool = pool;
    }

    /**
     * At least {@code bytes} of memory: the smallest free block that fits, a new slab when none does, or a region
     * of its own when larger than a slab.
     *
     * @throws IllegalArgumentException if {@code bytes} is not positive
     * @throws io.fabricrpc.api.TransportException if a new slab or region cannot be obtained
     */
    public Allocation allocate(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("allocation size must be positive, got " + bytes);
        }
        long size = (bytes + ALIGNMENT - 1) & -ALIGNMENT;
        if (size > pool.slabBytes()) {
            LocalRegion region = pool.dedicated(size);
            Allocation allocation = new Allocation(this, region, -1, 0, size);
            synchronized (this) {
                live.add(allocation);
            }
            return allocation;
        }
        synchronized (this) {
            Block fit = bySize.ceiling(new Block(-1, -1, size));
            if (fit == null) {
                LocalRegion slab = pool.slab(pool.slabBytes()); // under the lock: rare, and keeps one slab per miss
                slabs.add(slab);
                byOffset.add(new TreeMap<>());
                fit = new Block(slabs.size() - 1, 0, slab.length());
                freeBytes += slab.length();
            } else {
                removeFree(fit);
            }
            if (fit.size() > size) {
                addFree(new Block(fit.slab(), fit.offset() + size, fit.size() - size));
            }
            freeBytes -= size;
            Allocation allocation = new Allocation(this, slabs.get(fit.slab()), fit.slab(), fit.offset(), size);
            live.add(allocation);
            return allocation;
        }
    }

    /**
     * Returns a block; it merges with free neighbours. A dedicated region is closed.
     *
     * @throws IllegalArgumentException if the allocation was made by another allocator
     * @throws IllegalStateException    if it was freed already
     */
    public void free(Allocation allocation) {
        if (allocation.owner != this) {
            throw new IllegalArgumentException("foreign free: " + allocation + " was made by another allocator");
        }
        synchronized (this) {
            if (!live.remove(allocation)) {
                throw new IllegalStateException("double free: " + allocation + " was freed already");
            }
            if (allocation.slab < 0) {
                pool.release(allocation.region);
                return;
            }
            int slab = allocation.slab;
            long offset = allocation.offset;
            long size = allocation.size;
            TreeMap<Long, Block> free = byOffset.get(slab);
            Map.Entry<Long, Block> before = free.lowerEntry(offset);
            if (before != null && before.getValue().offset() + before.getValue().size() == offset) {
                removeFree(before.getValue());
                offset = before.getValue().offset();
                size += before.getValue().size();
            }
            Block after = free.get(allocation.offset + allocation.size);
            if (after != null) {
                removeFree(after);
                size += after.size();
            }
            addFree(new Block(slab, offset, size));
            freeBytes += allocation.size;
        }
    }

    private void addFree(Block block) {
        bySize.add(block);
        byOffset.get(block.slab()).put(block.offset(), block);
    }

    private void removeFree(Block block) {
        bySize.remove(block);
        byOffset.get(block.slab()).remove(block.offset());
    }

    /** Free bytes in the slabs. */
    public synchronized long freeBytes() {
        return freeBytes;
    }

    /** Number of free blocks (after coalescing): one per slab when nothing is allocated. */
    public synchronized int freeBlocks() {
        return bySize.size();
    }

    /** The largest free block in the slabs (0 if none). */
    public synchronized long largestFreeBlock() {
        return bySize.isEmpty() ? 0 : bySize.last().size();
    }

    public synchronized int slabCount() {
        return slabs.size();
    }

    /** Allocations not yet freed. */
    public synchronized int liveAllocations() {
        return live.size();
    }
}
