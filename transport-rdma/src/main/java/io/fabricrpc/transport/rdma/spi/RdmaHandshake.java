package io.fabricrpc.transport.rdma.spi;

import com.ibm.disni.verbs.IbvMr;
import io.fabricrpc.transport.EndpointAddress;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

import java.lang.foreign.MemorySegment;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;

import static io.fabricrpc.transport.rdma.spi.LinkMemoryDescriptor.*;

/**
 * The HELLO each side SENDs first on a QP: its endpoint id, listener address, control block and ring geometry.
 *
 * <p>Invariant: the first receive on the QP is the peer's HELLO; the reaper checks it, records the peer and starts
 * the receive ring, and only then sets {@code done}, whose volatile write publishes the peer fields (and the flush
 * target) to every thread that sees the link ready. Owners: the peer fields the reaper (cqLock), before {@code done};
 * afterwards they are read-only. Sending the HELLO is a post under qpLock like any other.
 */
final class RdmaHandshake {
    private final RdmaTransport transport;
    private final RdmaSendQueue queue;
    private final RdmaReceiveRing ring;
    private final RdmaLiveness liveness;
    private final IbvMr controlMr;
    private final int recvDepth;
    private final int slotSize;
    private final IdleStrategy idle = YieldingIdleStrategy.INSTANCE;

    // ---- the reaper, before done (peerId: the expected id until then, 0 if any); read-only after
    private long peerId;
    private EndpointAddress peerAddress;
    private boolean loopback;

    // ---- the reaper writes, any thread reads
    private volatile boolean done;

    RdmaHandshake(RdmaTransport transport, RdmaSendQueue queue, RdmaReceiveRing ring, RdmaLiveness liveness,
                  IbvMr controlMr, int recvDepth, int slotSize, long expectedPeerId) {
        this.transport = transport;
        this.queue = queue;
        this.ring = ring;
        this.liveness = liveness;
        this.controlMr = controlMr;
        this.recvDepth = recvDepth;
        this.slotSize = slotSize;
        this.peerId = expectedPeerId;
    }

    boolean lvDone() {
        return done;
    }

    long peerId() {
        return peerId;
    }

    EndpointAddress peerAddress() {
        return peerAddress;
    }

    /** A link to this endpoint itself: its reader is this process, so operations complete before they return. */
    boolean loopback() {
        return loopback;
    }

    /** Sends this side's HELLO (the first SEND on the QP); the caller then {@link #awaitHello awaits} the peer's. */
    void sendHello() {
        long ticket;
        queue.lockQp();
        try {
            liveness.checkAlive();
            ticket = queue.reserve(1);
            MemorySegment slot = ring.sendSlot(ticket);
            long p = SLOT_PAYLOAD_OFFSET;
            slot.set(INT_LAYOUT, SLOT_TYPE_OFFSET, HELLO_TYPE);
            slot.set(LONG_LAYOUT, p + HELLO_ENDPOINT_ID, transport.endpointId());
            slot.set(LONG_LAYOUT, p + HELLO_CONTROL_ADDRESS, controlMr.getAddr());
            slot.set(INT_LAYOUT, p + HELLO_CONTROL_KEY, controlMr.getRkey());
            slot.set(INT_LAYOUT, p + HELLO_RECV_DEPTH, recvDepth);
            slot.set(INT_LAYOUT, p + HELLO_IPV4, transport.ipv4());
            slot.set(INT_LAYOUT, p + HELLO_PORT, transport.port());
            slot.set(INT_LAYOUT, p + HELLO_SLOT_SIZE, slotSize);
            ring.postSlot(ticket, SLOT_PAYLOAD_OFFSET + HELLO_LENGTH, "SEND (hello)");
        } finally {
            queue.unlockQp();
        }
        queue.awaitTicket(ticket, "SEND (hello)");
    }

    /** Reaps until the peer's HELLO arrived (bounded by {@code rdma.connectTimeoutMillis}). */
    void awaitHello(long timeoutMillis) {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (!done) {
            queue.reap();
            liveness.checkAlive();
            if (System.nanoTime() - deadline > 0) {
                liveness.fail("no handshake from the peer within " + timeoutMillis + " ms (rdma.connectTimeoutMillis)");
                liveness.checkAlive();
            }
            idle.idle();
        }
    }

    /** Reaper, under cqLock: the first receive on the QP, which must be the peer's HELLO. */
    void onHello(int slot, int length) {
        MemorySegment received = ring.receiveSlot(slot);
        long p = SLOT_PAYLOAD_OFFSET;
        int type = received.get(INT_LAYOUT, SLOT_TYPE_OFFSET);
        if (slot != 0 || type != HELLO_TYPE || length != SLOT_PAYLOAD_OFFSET + HELLO_LENGTH) {
            liveness.fail("protocol error: first message on the QP is not a handshake (slot " + slot + ", type " + type
                    + ", " + length + " bytes)");
            return;
        }
        long helloId = received.get(LONG_LAYOUT, p + HELLO_ENDPOINT_ID);
        int peerSlotSize = received.get(INT_LAYOUT, p + HELLO_SLOT_SIZE);
        if (peerSlotSize != slotSize) {
            liveness.fail("peer " + Long.toHexString(helloId) + " uses messages of "
                    + (peerSlotSize - SLOT_PAYLOAD_OFFSET) + " bytes, this endpoint " + (slotSize - SLOT_PAYLOAD_OFFSET)
                    + " (rdma.maxMessageSize must match)");
            return;
        }
        if (peerId != 0 && helloId != peerId) {
            liveness.fail("the address named endpoint " + Long.toHexString(peerId) + " but the peer there is "
                    + Long.toHexString(helloId));
            return;
        }
        peerId = helloId;
        peerAddress = encodePeer(received.get(INT_LAYOUT, p + HELLO_IPV4), received.get(INT_LAYOUT, p + HELLO_PORT),
                helloId);
        loopback = helloId == transport.endpointId();
        queue.aimFlush(received.get(LONG_LAYOUT, p + HELLO_CONTROL_ADDRESS) + CONSUMED_OFFSET,
                received.get(INT_LAYOUT, p + HELLO_CONTROL_KEY));
        // Last: start reposts slot 0, so the HELLO's fields must all have been read.
        if (!ring.start(received.get(INT_LAYOUT, p + HELLO_RECV_DEPTH))) {
            return;
        }
        done = true; // volatile: publishes the peer fields above to every thread that sees the link ready
    }

    private static EndpointAddress encodePeer(int ipv4, int port, long id) {
        try {
            byte[] ip = ByteBuffer.allocate(4).putInt(ipv4).array();
            return RdmaAddresses.encode((Inet4Address) InetAddress.getByAddress(ip), port, id);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }
}
