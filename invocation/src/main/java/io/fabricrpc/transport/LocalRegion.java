package io.fabricrpc.transport;

import java.lang.foreign.MemorySegment;

/**
 * Memory of this process that the transport can move bytes from and into: registered memory under RDMA, a
 * mapped file under shared memory. Local code accesses it through {@link #segment()} (plain, VarHandle or
 * bulk access); peers reach it through {@link #remote()} within the granted {@link RemoteAccess}.
 *
 * <p>Thread-safe to share; closing it while peers still write into it is the owner's protocol error.
 */
public interface LocalRegion extends AutoCloseable {
    /** The region's memory for local access; valid until {@link #close()}. */
    MemorySegment segment();

    /** The handle peers use to address this region. */
    RemoteRegion remote();

    default long length() {
        return segment().byteSize();
    }

    /** Releases the memory (deregisters, unmaps). Idempotent. */
    @Override
    void close();
}
