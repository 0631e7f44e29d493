package io.fabricrpc.transport.rdma.hybrid;

import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;

import java.lang.foreign.MemorySegment;

/**
 * One piece of memory seen by both inner transports: a region of the shm endpoint (a mapped 0600 file when peers
 * get access, private memory otherwise) that is also registered with the rdma endpoint's protection domain
 * ({@code registerExternal}). Same-host peers map the file; remote peers reach it through the registration.
 * Thread-safe; close is idempotent.
 */
final class HybridLocalRegion implements LocalRegion {
    private final HybridTransport transport;
    final LocalRegion shm;
    final LocalRegion rdma;
    private final RemoteRegion remote;
    private boolean closed; // guarded by this

    HybridLocalRegion(HybridTransport transport, LocalRegion shm, LocalRegion rdma, RemoteRegion remote) {
        this.transport = transport;
        this.shm = shm;
        this.rdma = rdma;
        this.remote = remote;
    }

    HybridTransport transport() {
        return transport;
    }

    @Override
    public MemorySegment segment() {
        return shm.segment();
    }

    @Override
    public RemoteRegion remote() {
        return remote;
    }

    /** Deregisters, then unmaps: the device must not reach memory that is gone. */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        transport.forget(this);
        rdma.close(); // throws if deregistration fails: then the mapping stays too
        shm.close();
    }

    @Override
    public String toString() {
        return "HybridLocalRegion[" + remote + ", " + shm + "]";
    }
}
