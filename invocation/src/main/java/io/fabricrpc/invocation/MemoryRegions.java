package io.fabricrpc.invocation;

import io.fabricrpc.memory.RemoteAllocationService;
import io.fabricrpc.messaging.ServiceDispatcher;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.transport.Transport;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The regions this process allocated through the fabric, by region id (what calls and broadcasts name), and the
 * service through which peers allocate and free memory here. Thread-safe: the map is concurrent, and a region is
 * closed by whoever removes it.
 */
final class MemoryRegions {
    private final FabricRuntime runtime;
    private final Transport transport;
    private final RemoteAllocationService remote;
    private final Duration callTimeout;
    private final int rank;
    private final int size;
    private final Map<Long, LocalRegion> regions = new ConcurrentHashMap<>();

    /** Registers the allocation service: call before joining, as peers may ask for memory once the job forms. */
    MemoryRegions(FabricRuntime runtime, Transport transport, ServiceDispatcher service, Map<String, String> settings,
                  Duration callTimeout, int rank, int size) {
        this.runtime = runtime;
        this.transport = transport;
        this.callTimeout = callTimeout;
        this.rank = rank;
        this.size = size;
        this.remote = new RemoteAllocationService(service, RemoteAllocationService.limitFrom(settings), this::allocate,
                this::release);
    }

    LocalRegion allocate(long bytes, RemoteAccess access) {
        LocalRegion region = transport.allocate(bytes, access);
        regions.put(region.remote().regionId(), region);
        return region;
    }

    private void release(LocalRegion region) {
        regions.remove(region.remote().regionId());
        region.close();
    }

    RemoteRegion allocateRemote(int rank, long bytes, RemoteAccess access) {
        checkRank(rank);
        runtime.controlPlane().checkAlive(rank);
        return remote.allocate(runtime.link(rank), bytes, access, callTimeout);
    }

    void freeRemote(int rank, RemoteRegion region) {
        checkRank(rank);
        runtime.controlPlane().checkAlive(rank);
        remote.free(runtime.link(rank), region, callTimeout);
    }

    private void checkRank(int rank) {
        if (rank < 0 || rank >= size) {
            throw new IllegalArgumentException("no rank " + rank + " in a job of " + size + " processes");
        }
    }

    /** The region {@code regionId} of this process, or null. */
    LocalRegion own(long regionId) {
        return regions.get(regionId);
    }

    /** Bytes [offset, offset + length) of this process's region {@code regionId}, checked. */
    MemorySegment localRegion(long regionId, long offset, long length) {
        LocalRegion region = regions.get(regionId);
        if (region == null) {
            throw new IllegalArgumentException("call names region " + regionId + ", which rank " + rank
                    + " did not allocate through the fabric");
        }
        if (offset < 0 || length < 0 || offset > region.length() - length) {
            throw new IllegalArgumentException("call names bytes [" + offset + ", " + (offset + length) + ") of region "
                    + regionId + " (length " + region.length() + ")");
        }
        return region.segment().asSlice(offset, length);
    }

    void close() {
        regions.values().forEach(LocalRegion::close);
    }
}
