package io.fabricrpc.transport.rdma.spi;

import com.ibm.disni.verbs.IbvMr;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.api.TransportException;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Off-heap memory registered with the transport's protection domain: page-aligned memory the region owns (from
 * {@code allocate}) or borrowed memory (from {@code registerExternal}, arena null). Thread-safe; close is idempotent.
 */
final class RdmaLocalRegion implements LocalRegion {
    private final RdmaTransport transport;
    private final Arena arena;
    private final MemorySegment segment;
    private final IbvMr mr;
    private final RemoteRegion remote;
    private boolean closed;

    RdmaLocalRegion(RdmaTransport transport, Arena arena, MemorySegment segment, IbvMr mr, RemoteRegion remote) {
        this.transport = transport;
        this.arena = arena;
        this.segment = segment;
        this.mr = mr;
        this.remote = remote;
    }

    /** {@code region} as a region of {@code transport} that holds {@code [offset, offset + length)} for one WR. */
    static RdmaLocalRegion checked(RdmaTransport transport, LocalRegion region, String operation, long offset,
                                   long length) {
        if (!(region instanceof RdmaLocalRegion r) || r.transport != transport) {
            throw new TransportException(operation + ": local region " + region
                    + " was not allocated by this rdma endpoint (" + Long.toHexString(transport.endpointId()) + ")");
        }
        if (offset < 0 || length < 0 || offset > r.length() - length) {
            throw new TransportException(operation + " out of range: offset " + offset + " + " + length
                    + " bytes exceeds local region " + r.remote().regionId() + " (length " + r.length() + ")");
        }
        if (length > Integer.MAX_VALUE) {
            throw new TransportException(operation + " of " + length + " bytes exceeds one work request (2^31 - 1)");
        }
        return r;
    }

    long address() {
        return segment.address();
    }

    int lkey() {
        return mr.getLkey();
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
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        transport.regions().forget(this);
        // Throws if it fails: then the memory stays allocated, as the device may still reach it.
        transport.regions().deregister(mr);
        if (arena != null) { // null: memory owned by the caller of RdmaTransport.registerExternal
            arena.close();
        }
    }

    @Override
    public String toString() {
        return "RdmaLocalRegion[" + remote + "]";
    }
}
