package io.fabricrpc.transport.rdma.spi;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.api.TransportException;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One transport's registered memory, all in its protection domain: the regions it allocates (page-aligned, 2 MiB
 * hugepages from 2 MiB up when free) or borrows, with {@code LOCAL_WRITE} plus exactly the remote rights asked for,
 * and the registrations its links make for their own rings. Thread-safe: regions come and go from any thread.
 */
final class RdmaRegions {
    private final IbvPd pd;
    private final long endpointId;
    private final HugePages hugePages;
    private final AtomicLong regionIds = new AtomicLong();
    private final Set<RdmaLocalRegion> live = ConcurrentHashMap.newKeySet();

    RdmaRegions(IbvPd pd, long endpointId) {
        this.pd = pd;
        this.endpointId = endpointId;
        this.hugePages = new HugePages(endpointId);
    }

    RdmaLocalRegion allocate(RdmaTransport owner, long bytes, RemoteAccess access) {
        if (bytes <= 0 || bytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("rdma region size must be in (0, 2^31 - 1], got " + bytes);
        }
        Arena arena = Arena.ofShared();
        try {
            MemorySegment segment = bytes >= HugePages.PAGE_BYTES ? hugePages.map(bytes, arena) : null;
            if (segment == null) {
                segment = arena.allocate(bytes, 4096); // zeroed
            }
            return track(owner, arena, segment, access);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    RdmaLocalRegion registerExternal(RdmaTransport owner, MemorySegment segment, RemoteAccess access) {
        if (!segment.isNative() || segment.byteSize() <= 0 || segment.byteSize() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("only native segments of (0, 2^31 - 1] bytes can be registered, got "
                    + segment);
        }
        return track(owner, null, segment, access); // no arena: borrowed memory
    }

    private RdmaLocalRegion track(RdmaTransport owner, Arena arena, MemorySegment segment, RemoteAccess access) {
        IbvMr mr = register(segment, IbvMr.IBV_ACCESS_LOCAL_WRITE // reads land in local regions
                | (access.allowsWrite() ? IbvMr.IBV_ACCESS_REMOTE_WRITE : 0)
                | (access.allowsRead() ? IbvMr.IBV_ACCESS_REMOTE_READ : 0));
        RemoteRegion remote = new RemoteRegion(endpointId, regionIds.incrementAndGet(), mr.getAddr(),
                segment.byteSize(), mr.getRkey(), access);
        RdmaLocalRegion region = new RdmaLocalRegion(owner, arena, segment, mr, remote);
        live.add(region);
        return region;
    }

    boolean isHugePageBacked(long address) {
        return hugePages.backs(address);
    }

    IbvMr register(MemorySegment segment, int flags) {
        try {
            return pd.regMr(segment.address(), (int) segment.byteSize(), flags).execute().free().getMr();
        } catch (IOException e) {
            throw new TransportException("registering " + segment.byteSize() + " bytes with the RDMA device failed: "
                    + e.getMessage() + " (is the memlock limit high enough? ulimit -l)", e);
        }
    }

    void deregister(IbvMr mr) {
        try {
            mr.deregMr().execute().free();
        } catch (IOException e) {
            throw new TransportException("deregistering memory region (lkey " + mr.getLkey() + ") failed: "
                    + e.getMessage(), e);
        }
    }

    void forget(RdmaLocalRegion region) {
        live.remove(region);
    }

    /** At the transport's close, once no link can reach them: every region still open. */
    void closeAll() {
        for (RdmaLocalRegion region : live.toArray(RdmaLocalRegion[]::new)) {
            region.close();
        }
    }
}
