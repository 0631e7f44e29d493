package io.fabricrpc.transport.rdma.hybrid;

import io.fabricrpc.transport.EndpointAddress;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.api.TransportException;

import java.lang.foreign.MemorySegment;

/**
 * A link to one hybrid peer over exactly one inner link: an shm link when the peer is on this host, an rdma link
 * otherwise. Every operation goes to that inner link, so the SPI's ordering (issue order per thread and link),
 * completion tickets and liveness are the inner link's.
 *
 * <p>Regions are translated, not copied: a local {@link HybridLocalRegion} stands for its shm half or its rdma
 * registration; a peer's hybrid {@link RemoteRegion} becomes the inner handle the inner link understands (the peer's
 * shm endpoint id and region file id; or its rdma endpoint id, address and rkey). The inner handle is built once per
 * handle and link and cached in the handle's attachment, so the hot path allocates nothing. Thread-safe.
 */
final class HybridLink implements Link {
    /** Cached on a peer's hybrid handle: what it translates to on {@code link}. */
    private record Resolved(HybridLink link, RemoteRegion inner) {
    }

    private final HybridTransport transport;
    private final long peerId;
    private final EndpointAddress peerAddress;
    private final Link inner;
    private final boolean sharedMemory;
    private final int maxMessageSize;

    HybridLink(HybridTransport transport, long peerId, EndpointAddress peerAddress, Link inner, boolean sharedMemory) {
        this.transport = transport;
        this.peerId = peerId;
        this.peerAddress = peerAddress;
        this.inner = inner;
        this.sharedMemory = sharedMemory;
        this.maxMessageSize = transport.maxMessageSize();
    }

    /** {@code "shm"} or {@code "rdma"}: the kind of the inner link. */
    String innerKind() {
        return sharedMemory ? HybridAddress.SHM_KIND : HybridAddress.RDMA_KIND;
    }

    Link inner() {
        return inner;
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
        return inner.write(local(src, "write"), srcOffset, innerRegion(dst, "write"), dstOffset, length);
    }

    @Override
    public long writeLong(RemoteRegion dst, long dstOffset, long value) {
        return inner.writeLong(innerRegion(dst, "writeLong"), dstOffset, value);
    }

    @Override
    public long writePublished(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length) {
        return inner.writePublished(local(src, "writePublished"), srcOffset, innerRegion(dst, "writePublished"),
                dstOffset, length);
    }

    @Override
    public long writeFirstByteAs(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length,
                                 byte first) {
        return inner.writeFirstByteAs(local(src, "writeFirstByteAs"), srcOffset, innerRegion(dst, "writeFirstByteAs"),
                dstOffset, length, first);
    }

    @Override
    public long writePublishedInline(MemorySegment src, long srcOffset, RemoteRegion dst, long dstOffset, int length) {
        return inner.writePublishedInline(src, srcOffset, innerRegion(dst, "writePublishedInline"), dstOffset, length);
    }

    @Override
    public long writeAndFlag(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length,
                             long flagOffset, long flagValue) {
        return inner.writeAndFlag(local(src, "writeAndFlag"), srcOffset, innerRegion(dst, "writeAndFlag"), dstOffset,
                length, flagOffset, flagValue);
    }

    @Override
    public long read(RemoteRegion src, long srcOffset, LocalRegion dst, long dstOffset, long length) {
        return inner.read(innerRegion(src, "read"), srcOffset, local(dst, "read"), dstOffset, length);
    }

    @Override
    public boolean send(int type, MemorySegment payload, long offset, int length) {
        if (type == HybridTransport.HELLO) {
            throw new IllegalArgumentException("message type 0x" + Integer.toHexString(type)
                    + " is reserved by the hybrid transport");
        }
        if (length > maxMessageSize) { // the smaller inner limit, whichever path this link takes
            throw new IllegalArgumentException("message of " + length + " bytes exceeds the limit of "
                    + maxMessageSize + " bytes (the smaller of the shm and rdma limits)");
        }
        return inner.send(type, payload, offset, length);
    }

    @Override
    public boolean isComplete(long ticket) {
        return inner.isComplete(ticket);
    }

    @Override
    public boolean isBacklogged(long ticket) {
        return inner.isBacklogged(ticket);
    }

    @Override
    public void awaitCompletion(long ticket) {
        inner.awaitCompletion(ticket);
    }

    @Override
    public void checkAlive() {
        inner.checkAlive();
    }

    @Override
    public boolean isAlive() {
        return inner.isAlive();
    }

    @Override
    public void fence(String reason) {
        inner.fence(reason);
    }

    private LocalRegion local(LocalRegion region, String operation) {
        if (region instanceof HybridLocalRegion hybrid && hybrid.transport() == transport) {
            return sharedMemory ? hybrid.shm : hybrid.rdma;
        }
        throw new TransportException(operation + ": local region " + region
                + " was not allocated by this hybrid endpoint (" + Long.toHexString(transport.endpointId()) + ")");
    }

    /** The inner handle for a peer's hybrid handle: cached on the handle, so the hot path allocates nothing. */
    RemoteRegion innerRegion(RemoteRegion region, String operation) {
        // Acquire (in attachment()): a Resolved published by another thread is seen fully built.
        if (region.attachment() instanceof Resolved resolved && resolved.link == this) {
            return resolved.inner;
        }
        if (region.ownerId() != peerId) {
            throw new TransportException(operation + " to " + region + " on the link to " + Long.toHexString(peerId)
                    + ": the region belongs to another endpoint");
        }
        RemoteRegion translated = sharedMemory
                // The shm half is found by (peer shm endpoint, region id): its file name.
                ? new RemoteRegion(inner.peerId(), region.regionId(), 0, region.length(), 0, region.access())
                : new RemoteRegion(inner.peerId(), region.regionId(), region.address(), region.length(), region.key(),
                        region.access());
        region.attach(new Resolved(this, translated)); // release: the record's fields before the reference
        return translated;
    }

    @Override
    public String toString() {
        return "HybridLink[" + Long.toHexString(transport.endpointId()) + " -> " + Long.toHexString(peerId) + " over "
                + inner + "]";
    }
}
