package io.fabricrpc.memory;

import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.transport.Transport;

import java.util.ArrayList;
import java.util.List;

/**
 * Large regions obtained once from {@link Transport#allocate} with one access mode, so the allocators above it
 * register memory once per slab instead of once per buffer (Seriema's RDMAAllocator; under RDMA, slabs of 2 MiB and
 * more are backed by hugepages when the system has free ones). The pool owns every region it hands out and closes
 * them all in {@link #close()}.
 *
 * <p>Thread-safe (a lock: slabs are obtained rarely, never on an allocator's hot path).
 */
public final class SlabPool implements AutoCloseable {
    public static final long DEFAULT_SLAB_BYTES = 2L << 20;

    private final Transport transport;
    private final RemoteAccess access;
    private final long slabBytes;
    private final List<LocalRegion> regions = new ArrayList<>(); // guarded by this
    private long reservedBytes; // guarded by this
    private boolean closed; // guarded by this

    /** A pool of {@value #DEFAULT_SLAB_BYTES}-byte slabs. */
    public SlabPool(Transport transport, RemoteAccess access) {
        this(transport, access, DEFAULT_SLAB_BYTES);
    }

    /**
     * @param slabBytes size of a slab, a positive multiple of 4096
     * @throws IllegalArgumentException if {@code slabBytes} is not a positive multiple of 4096
     */
    public SlabPool(Transport transport, RemoteAccess access, long slabBytes) {
        if (slabBytes <= 0 || slabBytes % 4096 != 0) {
            throw new IllegalArgumentException("slab size must be a positive multiple of 4096, got " + slabBytes);
        }
        this.transport = transport;
        this.access = access;
        this.slabBytes = slabBytes;
    }

    public long slabBytes() {
        return slabBytes;
    }

    public RemoteAccess access() {
        return access;
    }

    public Transport transport() {
        return transport;
    }

    /**
     * A new region of at least {@code minBytes}: one slab, or for larger requests a region rounded up to whole
     * slabs (which the transport may not be able to back by hugepages if it is very large).
     *
     * @throws io.fabricrpc.api.TransportException if the transport cannot allocate or register it
     * @throws IllegalStateException if the pool is closed
     */
    public LocalRegion slab(long minBytes) {
        if (minBytes <= 0) {
            throw new IllegalArgumentException("slab request must be positive, got " + minBytes);
        }
        long bytes = (minBytes + slabBytes - 1) / slabBytes * slabBytes;
        return allocate(bytes);
    }

    /** A region of exactly {@code bytes} (rounded up to 64), for allocations that do not fit a slab. */
    public LocalRegion dedicated(long bytes) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("region size must be positive, got " + bytes);
        }
        return allocate((bytes + 63) & ~63L);
    }

    private synchronized LocalRegion allocate(long bytes) {
        if (closed) {
            throw new IllegalStateException("slab pool over " + transport.kind() + " endpoint "
                    + Long.toHexString(transport.endpointId()) + " is closed");
        }
        LocalRegion region = transport.allocate(bytes, access);
        regions.add(region);
        reservedBytes += region.length();
        return region;
    }

    /** Closes one region this pool handed out (a dedicated region whose allocation was freed). */
    public synchronized void release(LocalRegion region) {
        if (!regions.remove(region)) {
            throw new IllegalArgumentException(region + " was not allocated by this pool (or was released already)");
        }
        reservedBytes -= region.length();
        region.close();
    }

    /** Regions currently held (slabs and dedicated regions). */
    public synchronized int regionCount() {
        return regions.size();
    }

    /** Bytes currently held from the transport. */
    public synchronized long reservedBytes() {
        return reservedBytes;
    }

    /** Closes every region of the pool; memory handed out from them must no longer be used. Idempotent. */
    @Override
    public synchronized void close() {
        closed = true;
        regions.forEach(LocalRegion::close);
        regions.clear();
        reservedBytes = 0;
    }
}
