package io.fabricrpc.transport.shm;

import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;

/** A region in a 0600 file peers map (or in plain off-heap memory when peers get no access). */
final class ShmLocalRegion implements LocalRegion {
    private final ShmTransport owner;
    private final Arena arena;
    private final MemorySegment file;
    private final MemorySegment data;
    private final RemoteRegion remote;
    private final Path path;
    private final AtomicBoolean closed = new AtomicBoolean();

    ShmLocalRegion(ShmTransport owner, Arena arena, MemorySegment file, MemorySegment data, RemoteRegion remote, Path path) {
        this.owner = owner;
        this.arena = arena;
        this.file = file;
        this.data = data;
        this.remote = remote;
        this.path = path;
    }

    @Override
    public MemorySegment segment() {
        return data;
    }

    @Override
    public RemoteRegion remote() {
        return remote;
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            if (file != null) {
                try {
                    SegmentHeaderDescriptor.setState(file, SegmentHeaderDescriptor.STATE_CLOSED);
                } catch (InternalError cutShort) { // the file was truncated under the mapping: nothing left to mark
                }
            }
            if (path != null) {
                ShmDirectory.deleteQuietly(path);
            }
            owner.forget(this);
            arena.close();
        }
    }

    @Override
    public String toString() {
        return "ShmLocalRegion[" + remote + (path != null ? ", " + path : ", private") + "]";
    }
}
