package io.fabricrpc.transport.shm;

import io.fabricrpc.transport.EndpointAddress;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.api.TransportException;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A link to a peer endpoint on this host: peer regions are mapped on first use and cached; writes are copies
 * into the mapping. Ordering (the SPI's "visible in issue order"): every write starts with a release fence, so
 * the stores of an earlier write (or any earlier store of the thread) become visible no later than its own;
 * {@link #writeLong} is a release store; peers read flags with acquire loads. All operations complete
 * synchronously, so every ticket is {@link #COMPLETE}.
 */
final class ShmLink implements Link {
    static final long COMPLETE = 1;

    /** Cached on a {@link RemoteRegion}: the data of a mapped peer region, valid while {@code link} is open. */
    private record PeerMapping(ShmLink link, MemorySegment data) {
    }

    private final ShmTransport transport;
    private final long peerId;
    private final EndpointAddress peerAddress;
    private final MemorySegment peerEndpoint;
    private final ManyToOneRingBuffer peerRing;
    private final Arena arena;
    private final long peerPid;
    private final long peerStart;
    private final boolean loopback;
    private final ConcurrentHashMap<Long, MemorySegment> regions = new ConcurrentHashMap<>();
    /** Set once, by CAS (the liveness monitor, fencing, close): the first reason the link failed. */
    private volatile String failure;
    /** Senders' hooks ({@link #whenFailed}): added by senders, run by whichever thread ends the link. */
    private final java.util.concurrent.CopyOnWriteArrayList<Runnable> failureHooks =
            new java.util.concurrent.CopyOnWriteArrayList<>();
    private static final java.lang.invoke.VarHandle FAILURE;

    static {
        try {
            FAILURE = java.lang.invoke.MethodHandles.lookup().findVarHandle(ShmLink.class, "failure", String.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private void casFailure(String reason) {
        if (FAILURE.compareAndSet(this, null, reason)) {
            runFailureHooks(); // after the failure's volatile store: a hook added later sees it (whenFailed)
        }
    }

    @Override
    public void whenFailed(Runnable hook) {
        failureHooks.add(hook);
        if (!isAlive()) { // the link ended while the hook was added: whoever ended it may not have seen it
            hook.run();
        }
    }

    /** Tells every sender storing into this link's windows to look at it: the link, or its endpoint, ended. */
    void runFailureHooks() {
        failureHooks.forEach(Runnable::run);
    }

    @Override
    public void fence(String reason) {
        casFailure("fenced: " + reason);
    }

    ShmLink(ShmTransport transport, long peerId, EndpointAddress peerAddress, MemorySegment peerEndpoint, Arena arena,
            boolean loopback) {
        this.transport = transport;
        this.peerId = peerId;
        this.peerAddress = peerAddress;
        this.peerEndpoint = peerEndpoint;
        this.arena = arena;
        this.loopback = loopback;
        this.peerPid = SegmentHeaderDescriptor.ownerPid(peerEndpoint);
        this.peerStart = SegmentHeaderDescriptor.ownerStart(peerEndpoint);
        MemorySegment ring = peerEndpoint.asSlice(EndpointSegmentDescriptor.RING_OFFSET,
                EndpointSegmentDescriptor.ringLength(transport.ringCapacity()));
        this.peerRing = new ManyToOneRingBuffer(new UnsafeBuffer(ring.address(), (int) ring.byteSize()));
    }

    @Override
    public long peerId() {
        return peerId;
    }

    @Override
    public EndpointAddress peerAddress() {
        return peerAddress;
    }

    @Override
    public long write(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length) {
        MemorySegment target = target(dst, "write", dstOffset, length, true);
        VarHandle.releaseFence(); // earlier stores of this thread become visible before these bytes
        MemorySegment.copy(src.segment(), srcOffset, target, dstOffset, length);
        return COMPLETE;
    }

    @Override
    public long writeLong(RemoteRegion dst, long dstOffset, long value) {
        if ((dstOffset & 7) != 0) {
            throw new TransportException("writeLong at unaligned offset " + dstOffset + " of " + dst);
        }
        MemorySegment target = target(dst, "writeLong", dstOffset, Long.BYTES, true);
        SegmentHeaderDescriptor.LONG.setRelease(target, dstOffset, value); // release: orders all earlier writes
        return COMPLETE;
    }

    @Override
    public MemorySegment directWindow(RemoteRegion region) {
        MemorySegment window = target(region, "directWindow", 0, region.length(), true);
        return transport.directWindows ? window : null;
    }

    @Override
    public long writePublished(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length) {
        Link.checkPublishable(dst, dstOffset, length);
        return publish(src.segment(), srcOffset, target(dst, "writePublished", dstOffset, length, true), dstOffset,
                length);
    }

    @Override
    public long writePublishedInline(MemorySegment src, long srcOffset, RemoteRegion dst, long dstOffset, int length) {
        Link.checkInline(dst, dstOffset, length);
        return publish(src, srcOffset, target(dst, "writePublishedInline", dstOffset, length, true), dstOffset, length);
    }

    /** The copy is synchronous, so an inline source needs nothing more than a region's. */
    private static long publish(MemorySegment source, long srcOffset, MemorySegment target, long dstOffset, long length) {
        VarHandle.releaseFence(); // earlier stores of this thread become visible before these bytes
        MemorySegment.copy(source, srcOffset + 1, target, dstOffset + 1, length - 1);
        // release: the first byte after the rest
        SegmentHeaderDescriptor.BYTE.setRelease(target, dstOffset, source.get(ValueLayout.JAVA_BYTE, srcOffset));
        return COMPLETE;
    }

    @Override
    public long writeAndFlag(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length,
                             long flagOffset, long flagValue) {
        if ((flagOffset & 7) != 0) {
            throw new TransportException("writeAndFlag: flag at unaligned offset " + flagOffset + " of " + dst);
        }
        dst.checkRange("writeAndFlag flag", flagOffset, Long.BYTES);
        MemorySegment target = target(dst, "writeAndFlag", dstOffset, length, true);
        VarHandle.releaseFence(); // earlier stores of this thread become visible before these bytes
        MemorySegment.copy(src.segment(), srcOffset, target, dstOffset, length);
        SegmentHeaderDescriptor.LONG.setRelease(target, flagOffset, flagValue); // release: the flag after the bytes
        return COMPLETE;
    }

    @Override
    public long read(RemoteRegion src, long srcOffset, LocalRegion dst, long dstOffset, long length) {
        MemorySegment source = target(src, "read", srcOffset, length, false);
        VarHandle.acquireFence(); // the bytes read are at least as new as any flag this thread acquired before
        MemorySegment.copy(source, srcOffset, dst.segment(), dstOffset, length);
        VarHandle.acquireFence(); // later loads of the caller do not move above the copy
        return COMPLETE;
    }

    @Override
    public boolean send(int type, MemorySegment payload, long offset, int length) {
        if (type <= 0) {
            throw new IllegalArgumentException("message type must be > 0, got " + type);
        }
        if (length < 0 || length > transport.maxMessageSize()) {
            throw new IllegalArgumentException("message of " + length + " bytes exceeds the limit of "
                    + transport.maxMessageSize() + " bytes (shm.messageQueueBytes / 8 - 8)");
        }
        checkAlive();
        int index = peerRing.tryClaim(type, length + EndpointSegmentDescriptor.SENDER_ID_LENGTH);
        if (index < 0) {
            return false;
        }
        try {
            long base = EndpointSegmentDescriptor.RING_OFFSET + index;
            peerEndpoint.set(ValueLayout.JAVA_LONG_UNALIGNED, base, transport.endpointId());
            MemorySegment.copy(payload, offset, peerEndpoint, base + EndpointSegmentDescriptor.SENDER_ID_LENGTH, length);
        } catch (RuntimeException e) {
            peerRing.abort(index);
            throw e;
        }
        peerRing.commit(index); // Agrona publishes the record length with a release store
        return true;
    }

    @Override
    public boolean isComplete(long ticket) {
        return true;
    }

    @Override
    public void awaitCompletion(long ticket) {
        checkAlive();
    }

    @Override
    public void checkAlive() {
        String reason = failure;
        if (reason != null) {
            throw new PeerFailedException(peerName(), reason);
        }
        if (transport.isClosed()) {
            throw new PeerFailedException(peerName(), "this endpoint (" + Long.toHexString(transport.endpointId())
                    + ") is closed");
        }
        String own = transport.ownFault();
        if (own != null) {
            throw new PeerFailedException(peerName(), own);
        }
    }

    @Override
    public boolean isAlive() {
        return failure == null && !transport.isClosed() && transport.ownFault() == null;
    }

    /**
     * After a fault in shared memory ({@code fault}), or periodically (null): fails this link if the peer's endpoint
     * file or a mapped region file is short.
     * True if this link failed for it (now or before).
     */
    boolean checkFiles(Throwable fault) {
        if (loopback) {
            return false;
        }
        if (failure != null) {
            return failure.contains("cut short");
        }
        ShmDirectory directory = transport.directory();
        Path endpoint = directory.endpointFile(peerId);
        if (ShmDirectory.isShorterThan(endpoint, EndpointSegmentDescriptor.fileLength(transport.ringCapacity()))) {
            casFailure("its endpoint file " + endpoint + " was cut short under the mapping (truncated?)" + cause(fault));
        }
        regions.forEach((regionId, data) -> {
            Path file = directory.regionFile(peerId, regionId);
            if (ShmDirectory.isShorterThan(file, SegmentHeaderDescriptor.HEADER_LENGTH + data.byteSize())) {
                casFailure("its region file " + file + " was cut short under the mapping (truncated?)" + cause(fault));
            }
        });
        String reason = failure;
        if (reason == null || !reason.contains("cut short")) {
            return false;
        }
        System.getLogger("fabricrpc.shm").log(System.Logger.Level.ERROR, "link " + this + " failed: " + reason);
        return true;
    }

    private static String cause(Throwable fault) {
        return fault == null ? " (seen by the liveness check)" : ": " + fault;
    }

    String peerName() {
        return "shm endpoint " + Long.toHexString(peerId) + " (pid " + peerPid + ")";
    }

    /** Called by the liveness monitor; records the first reason only. */
    void checkPeer(long nowMillis, long timeoutMillis) {
        if (failure != null || loopback) {
            return;
        }
        String reason = null;
        if (SegmentHeaderDescriptor.state(peerEndpoint) == SegmentHeaderDescriptor.STATE_CLOSED) {
            reason = "it closed its endpoint";
        } else if (!ProcessLiveness.isSameProcessAlive(peerPid, peerStart)) {
            reason = "process " + peerPid + " exited";
        } else {
            long silent = nowMillis - SegmentHeaderDescriptor.heartbeat(peerEndpoint);
            if (silent > timeoutMillis) {
                reason = "no heartbeat for " + silent + " ms (shm.peerTimeoutMillis = " + timeoutMillis + ")";
            }
        }
        if (reason != null) {
            casFailure(reason);
        }
    }

    private MemorySegment target(RemoteRegion region, String operation, long offset, long length, boolean writing) {
        checkAlive();
        if (region.ownerId() != peerId) {
            throw new TransportException(operation + " to " + region + " on the link to "
                    + Long.toHexString(peerId) + ": the region belongs to another endpoint");
        }
        RemoteAccess access = region.access();
        if (writing ? !access.allowsWrite() : !access.allowsRead()) {
            throw new TransportException(operation + " denied: " + region + " grants peers " + access);
        }
        region.checkRange(operation, offset, length);
        if (region.attachment() instanceof PeerMapping mapping && mapping.link == this) {
            return mapping.data;
        }
        MemorySegment data = resolve(region);
        region.attach(new PeerMapping(this, data));
        return data;
    }

    private MemorySegment resolve(RemoteRegion region) {
        return regions.computeIfAbsent(region.regionId(), id -> map(region));
    }

    private MemorySegment map(RemoteRegion region) {
        Path file = transport.directory().regionFile(peerId, region.regionId());
        MemorySegment mapped;
        try {
            mapped = transport.directory().map(file, region.access().allowsWrite(), arena,
                    SegmentHeaderDescriptor.HEADER_LENGTH + region.length());
        } catch (NoSuchFileException e) {
            throw new TransportException("remote region " + region + " is gone: no file " + file
                    + " (closed by its owner, or the owner died)");
        }
        if (!SegmentHeaderDescriptor.isComplete(mapped)
                || SegmentHeaderDescriptor.version(mapped) != SegmentHeaderDescriptor.LAYOUT_VERSION
                || SegmentHeaderDescriptor.kind(mapped) != SegmentHeaderDescriptor.KIND_REGION
                || SegmentHeaderDescriptor.endpointId(mapped) != peerId
                || SegmentHeaderDescriptor.regionId(mapped) != region.regionId()
                || SegmentHeaderDescriptor.dataLength(mapped) != region.length()
                || SegmentHeaderDescriptor.access(mapped) != region.access().ordinal()) {
            throw new TransportException("file " + file + " does not hold " + region + " (header: endpoint "
                    + Long.toHexString(SegmentHeaderDescriptor.endpointId(mapped)) + ", region "
                    + SegmentHeaderDescriptor.regionId(mapped) + ", length " + SegmentHeaderDescriptor.dataLength(mapped)
                    + ", version " + SegmentHeaderDescriptor.version(mapped) + ")");
        }
        return mapped.asSlice(SegmentHeaderDescriptor.HEADER_LENGTH, region.length());
    }

    void close() {
        casFailure("the link was closed");
        arena.close(); // peer mappings only; a loopback link's endpoint segment belongs to the transport
    }

    @Override
    public String toString() {
        return "ShmLink[" + Long.toHexString(transport.endpointId()) + " -> " + peerName() + "]";
    }
}
