package io.fabricrpc.transport;

import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.api.RemoteAccess;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** A local region over native memory of a shared arena, for fabric-free harnesses; its handle names no real owner. */
public final class ArenaRegion implements LocalRegion {
    private final Arena arena = Arena.ofShared();
    private final MemorySegment segment;
    private final RemoteRegion remote;

    public ArenaRegion(long regionId, long bytes, RemoteAccess access) {
        this.segment = arena.allocate(bytes, 64);
        this.remote = new RemoteRegion(0, regionId, segment.address(), bytes, 0, access);
    }

    @Override
    public MemorySegment segment() {
        return segment;
    }

    @Override
    public RemoteRegion remote() {
        return remote;
    }

    @Override
    public void close() {
        if (arena.scope().isAlive()) {
            arena.close();
        }
    }
}
