package io.fabricrpc.transport.rdma.spi;

import com.ibm.disni.verbs.IbvMr;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.api.TransportException;
import io.fabricrpc.transport.EndpointAddress;
import io.fabricrpc.transport.Link;
import io.fabricrpc.transport.LinkStatistics;
import io.fabricrpc.transport.MessageHandler;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static io.fabricrpc.transport.rdma.spi.LinkMemoryDescriptor.*;

/**
 * A link over one RC queue pair: checks an operation's regions once, then hands it to the part that does it. Why it
 * works (ordering, tickets and selective signaling, credits, the flush number, liveness): the package doc.
 *
 * <p>Parts: {@link RdmaSendQueue} (WR numbers, signaling, tickets, reaping; qpLock and cqLock), {@link RdmaWrites}
 * (the one-sided variants), {@link RdmaReceiveRing} (messages and credits), {@link RdmaHandshake} (HELLO) and
 * {@link RdmaLiveness} (failure, heartbeat). The link owns the registered memory they share and frees it last, once
 * the transport has closed the QP ({@link #releaseMemory}). Thread-safe; fields are final after construction.
 */
final class RdmaLink implements Link {
    private final RdmaTransport transport;
    final QpEndpoint endpoint;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment control;
    private final MemorySegment data;
    private final IbvMr controlMr;
    private final IbvMr dataMr;
    private final RdmaLiveness liveness;
    private final RdmaSendQueue queue;
    private final RdmaReceiveRing ring;
    private final RdmaHandshake handshake;
    private final RdmaWrites writes;

    RdmaLink(RdmaTransport transport, QpEndpoint endpoint, long expectedPeerId) {
        this.transport = transport;
        this.endpoint = endpoint;
        int sqDepth = transport.sqDepth();
        int recvDepth = transport.recvDepth();
        int slotSize = slotSize(transport.maxMessageSize());
        long timeoutNanos = transport.operationTimeoutMillis() * 1_000_000L;
        this.control = arena.allocate(CONTROL_LENGTH, 4096);
        this.data = arena.allocate(dataLength(sqDepth, recvDepth, slotSize), 4096);
        try {
            RdmaRegions regions = transport.regions();
            this.controlMr = regions.register(control, IbvMr.IBV_ACCESS_LOCAL_WRITE | IbvMr.IBV_ACCESS_REMOTE_READ);
            this.dataMr = regions.register(data, IbvMr.IBV_ACCESS_LOCAL_WRITE);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        this.liveness = new RdmaLiveness(this, timeoutNanos);
        this.queue = new RdmaSendQueue(this, liveness, sqDepth, transport.signalInterval(), timeoutNanos, control,
                controlMr);
        this.ring = new RdmaReceiveRing(queue, liveness, sqDepth, recvDepth, slotSize, data, dataMr.getLkey(), control);
        this.handshake = new RdmaHandshake(transport, queue, ring, liveness, controlMr, recvDepth, slotSize,
                expectedPeerId);
        this.writes = new RdmaWrites(queue, liveness, handshake, data, dataMr.getLkey(), sqDepth);
        endpoint.attach(this);
    }

    /** Runs inside DiSNI's resource allocation, once the QP exists and before the connection is made. */
    void postInitialReceives() throws IOException {
        ring.postInitialReceives(endpoint);
        writes.prepare(endpoint);
        queue.prepare(endpoint); // last: it publishes the prepared calls to the threads that reap and post
    }

    /** Reaper: a completed receive is the peer's HELLO until the handshake is done, then a message. */
    void onReceive(int slot, int byteLength) {
        if (!handshake.lvDone()) {
            handshake.onHello(slot, byteLength);
        } else {
            ring.onReceive(slot, byteLength);
        }
    }

    void sendHello() {
        handshake.sendHello();
    }

    void awaitHello(long timeoutMillis) {
        handshake.awaitHello(timeoutMillis);
    }

    @Override
    public long peerId() {
        return handshake.peerId();
    }

    @Override
    public EndpointAddress peerAddress() {
        return handshake.peerAddress();
    }

    // ---------------------------------------------------------------- one-sided operations

    @Override
    public long write(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length) {
        RdmaLocalRegion source = RdmaLocalRegion.checked(transport, src, "write", srcOffset, length);
        checkRemote(dst, "write", dstOffset, length, true);
        return writes.write(source, srcOffset, dst, dstOffset, length);
    }

    @Override
    public long writeLong(RemoteRegion dst, long dstOffset, long value) {
        if ((dstOffset & 7) != 0) {
            throw new TransportException("writeLong at unaligned offset " + dstOffset + " of " + dst);
        }
        checkRemote(dst, "writeLong", dstOffset, Long.BYTES, true);
        return writes.writeLong(dst, dstOffset, value);
    }

    @Override
    public long writeAndFlag(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length,
                             long flagOffset, long flagValue) {
        if ((flagOffset & 7) != 0) {
            throw new TransportException("writeAndFlag: flag at unaligned offset " + flagOffset + " of " + dst);
        }
        RdmaLocalRegion source = RdmaLocalRegion.checked(transport, src, "writeAndFlag", srcOffset, length);
        checkRemote(dst, "writeAndFlag", dstOffset, length, true);
        dst.checkRange("writeAndFlag flag", flagOffset, Long.BYTES);
        return writes.writeAndFlag(source, srcOffset, dst, dstOffset, length, flagOffset, flagValue);
    }

    @Override
    public long writePublished(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length) {
        Link.checkPublishable(dst, dstOffset, length);
        RdmaLocalRegion source = RdmaLocalRegion.checked(transport, src, "writePublished", srcOffset, length);
        checkRemote(dst, "writePublished", dstOffset, length, true);
        return length == 1 ? writes.write(source, srcOffset, dst, dstOffset, length)
                : writes.writePublished(source, srcOffset, dst, dstOffset, length);
    }

    @Override
    public long writeFirstByteAs(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length,
                                 byte first) {
        Link.checkFirstByteAs(dst, dstOffset, length);
        RdmaLocalRegion source = RdmaLocalRegion.checked(transport, src, "writeFirstByteAs", srcOffset, length);
        checkRemote(dst, "writeFirstByteAs", dstOffset, length, true);
        return writes.writeFirstByteAs(source, srcOffset, dst, dstOffset, length, first);
    }

    @Override
    public long writePublishedInline(MemorySegment src, long srcOffset, RemoteRegion dst, long dstOffset, int length) {
        Link.checkInline(dst, dstOffset, length);
        checkRemote(dst, "writePublishedInline", dstOffset, length, true);
        return writes.writePublishedInline(src, srcOffset, dst, dstOffset, length);
    }

    @Override
    public long read(RemoteRegion src, long srcOffset, LocalRegion dst, long dstOffset, long length) {
        checkRemote(src, "read", srcOffset, length, false);
        RdmaLocalRegion target = RdmaLocalRegion.checked(transport, dst, "read", dstOffset, length);
        return writes.read(src, srcOffset, target, dstOffset, length);
    }

    private void checkRemote(RemoteRegion region, String operation, long offset, long length, boolean writing) {
        liveness.checkAlive();
        long peerId = handshake.peerId();
        if (region.ownerId() != peerId) {
            throw new TransportException(operation + " to " + region + " on the link to " + Long.toHexString(peerId)
                    + ": the region belongs to another endpoint");
        }
        if (writing ? !region.access().allowsWrite() : !region.access().allowsRead()) {
            throw new TransportException(operation + " denied: " + region + " grants peers " + region.access());
        }
        region.checkRange(operation, offset, length);
    }

    // ---------------------------------------------------------------- messages and tickets

    @Override
    public boolean send(int type, MemorySegment payload, long offset, int length) {
        return ring.send(type, payload, offset, length);
    }

    /** The transport's single {@code pollMessages} thread: delivers up to {@code limit} received messages. */
    int deliver(MessageHandler handler, int limit) {
        queue.reap();
        if (!handshake.lvDone() || !liveness.isAlive()) {
            return 0;
        }
        return ring.deliver(handler, transport.linkFor(handshake.peerId(), this), limit);
    }

    @Override
    public boolean isComplete(long ticket) {
        return queue.isComplete(ticket);
    }

    @Override
    public boolean isBacklogged(long ticket) {
        return queue.isBacklogged(ticket);
    }

    @Override
    public void awaitCompletion(long ticket) {
        queue.awaitCompletion(ticket);
    }

    @Override
    public LinkStatistics statistics() {
        return queue;
    }

    /** Signaled requests posted so far (tests check that signaling stays selective). */
    long signaledCount() {
        return queue.signaledCount();
    }

    /** Work requests posted so far. */
    long postedCount() {
        return queue.postedCount();
    }

    /** Heartbeat probes posted on this idle link so far (read by tests). */
    long probes() {
        return liveness.lvProbes();
    }

    /** The send queue, for tests of its tickets and signaling on a live link. */
    RdmaSendQueue sendQueue() {
        return queue;
    }

    // ---------------------------------------------------------------- liveness and teardown

    /** The transport's heartbeat thread, every {@code rdma.heartbeatMillis}; never waits for the QP lock. */
    void heartbeat(long nowNanos) {
        if (handshake.lvDone() && liveness.isAlive() && !handshake.loopback()) {
            liveness.heartbeat(nowNanos, queue);
        }
    }

    @Override
    public void checkAlive() {
        liveness.checkAlive();
    }

    @Override
    public boolean isAlive() {
        return liveness.isAlive();
    }

    /** Records the first reason the link failed; later operations throw it. */
    void fail(String reason) {
        liveness.fail(reason);
    }

    @Override
    public void fence(String reason) {
        liveness.fail("fenced: " + reason);
    }

    String peerName() {
        return "rdma endpoint " + Long.toHexString(handshake.peerId());
    }

    /** Fails the link and destroys its QP and CQ; the memory goes later, see {@link #releaseMemory}. */
    void close(String reason) {
        liveness.close(reason, queue, endpoint);
    }

    /**
     * Frees the prepared calls, deregisters and frees the link memory. The transport calls it only after DiSNI's
     * group is closed (no CM thread, no QP left), so that nothing can still reach this memory.
     */
    void releaseMemory() {
        liveness.releaseMemory(queue, this::freeQuietly);
    }

    private void freeQuietly() {
        try {
            // the QP is destroyed: nothing executes these prepared calls any more
            writes.free();
            ring.free();
            queue.free();
            transport.regions().deregister(controlMr);
            transport.regions().deregister(dataMr);
        } catch (RuntimeException e) {
            return; // still registered: freeing it could let the device write into reused memory; leak instead
        }
        arena.close();
    }

    @Override
    public String toString() {
        return "RdmaLink[" + Long.toHexString(transport.endpointId()) + " -> " + peerName() + "]";
    }
}
