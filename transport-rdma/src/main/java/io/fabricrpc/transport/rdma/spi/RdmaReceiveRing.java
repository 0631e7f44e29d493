package io.fabricrpc.transport.rdma.spi;

import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import io.fabricrpc.transport.Link;
import io.fabricrpc.transport.MessageHandler;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.util.LinkedList;
import java.util.List;

import static io.fabricrpc.transport.rdma.spi.LinkMemoryDescriptor.*;

/**
 * Two-sided messages: this side's ring of {@code recvDepth} receive slots, and the credits for the peer's ring.
 *
 * <p>Invariant: receives are posted, complete and are delivered in ring order; {@code consumed} (the control word the
 * peer READs) counts reposted slots, and a SEND goes out only while {@code messagesSent < peerRecvDepth +
 * peerConsumed}, so no SEND meets a missing receive. Owners: {@code receiveLengths} and {@code receivesCompleted} the
 * reaper (cqLock); {@code delivered}, {@code consumed} the delivering thread (the reaper for the handshake, before the
 * link is ready); the send side posters under qpLock.
 */
final class RdmaReceiveRing {
    private final RdmaSendQueue queue;
    private final RdmaLiveness liveness;
    private final int sqDepth;
    private final int recvDepth;
    private final int slotSize;
    private final MemorySegment data;
    private final int dataKey;
    private final MemorySegment control;

    // ---- the reaper, under cqLock (receivesCompleted: volatile, publishes lengths and bytes to the deliverer)
    private final int[] receiveLengths;
    private volatile long receivesCompleted;

    // ---- the delivering thread (and the reaper, on the handshake): prepared when the QP is set up
    private SVCPostRecv[] receiveCalls;
    private long delivered;
    private long consumed;

    // ---- posters, under qpLock (peerRecvDepth: set by the reaper before the handshake publishes the link)
    private SVCPostSend sendCall;
    private SVCPostSend.SendWRMod sendWr;
    private long messagesSent;
    private long peerConsumed;
    private int peerRecvDepth;

    RdmaReceiveRing(RdmaSendQueue queue, RdmaLiveness liveness, int sqDepth, int recvDepth, int slotSize,
                    MemorySegment data, int dataKey, MemorySegment control) {
        this.queue = queue;
        this.liveness = liveness;
        this.sqDepth = sqDepth;
        this.recvDepth = recvDepth;
        this.slotSize = slotSize;
        this.data = data;
        this.dataKey = dataKey;
        this.control = control;
        this.receiveLengths = new int[recvDepth];
    }

    /** Inside DiSNI's resource allocation, once the QP exists and before the connection is made. */
    void postInitialReceives(QpEndpoint endpoint) throws IOException {
        receiveCalls = new SVCPostRecv[recvDepth];
        for (int slot = 0; slot < recvDepth; slot++) {
            IbvSge sge = new IbvSge();
            sge.setAddr(data.address() + receiveSlotOffset(slot, sqDepth, slotSize));
            sge.setLength(slotSize);
            sge.setLkey(dataKey);
            LinkedList<IbvSge> sges = new LinkedList<>();
            sges.add(sge);
            IbvRecvWR wr = new IbvRecvWR();
            wr.setWr_id(RdmaSendQueue.RECEIVE_TAG | slot);
            wr.setSg_list(sges);
            receiveCalls[slot] = endpoint.postRecv(List.of(wr));
            receiveCalls[slot].execute(); // ring order: receives complete in slot order 0, 1, ... and around
        }
        sendCall = endpoint.prepareSend(IbvSendWR.IBV_WR_SEND, 1, 1, dataKey);
        sendWr = sendCall.getWrMod(0);
    }

    /** Reaper, on the peer's HELLO (it took slot 0): reposts slot 0 and starts counting; false if that failed. */
    boolean start(int peerDepth) {
        peerRecvDepth = peerDepth;
        try {
            receiveCalls[0].execute();
        } catch (IOException e) {
            liveness.fail("reposting receive slot 0 failed: " + e.getMessage());
            return false;
        }
        receivesCompleted = 1;
        delivered = 1;
        consumed = 1;
        publishConsumed(control, consumed);
        return true;
    }

    /** A view of receive slot {@code slot} (type word, then payload): the handshake reads the HELLO there. */
    MemorySegment receiveSlot(int slot) {
        return data.asSlice(receiveSlotOffset(slot, sqDepth, slotSize), slotSize);
    }

    /** A view of the send slot of {@code ticket}: the handshake writes its HELLO there. */
    MemorySegment sendSlot(long ticket) {
        return data.asSlice(sendSlotOffset(ticket, sqDepth, recvDepth, slotSize), slotSize);
    }

    /** Reaper, after the handshake: receive slot {@code slot} holds {@code byteLength} bytes. */
    void onReceive(int slot, int byteLength) {
        long next = receivesCompleted;
        if (slot != (int) (next % recvDepth)) {
            liveness.fail("receive completed out of ring order: slot " + slot + ", expected " + next % recvDepth);
            return;
        }
        receiveLengths[slot] = byteLength;
        receivesCompleted = next + 1; // volatile: publishes the length and the received bytes to the deliverer
    }

    /** The delivering thread: up to {@code limit} received messages to {@code handler}, reposting their slots. */
    int deliver(MessageHandler handler, Link from, int limit) {
        int count = 0;
        while (count < limit && delivered < receivesCompleted) {
            int slot = (int) (delivered % recvDepth);
            long base = receiveSlotOffset(slot, sqDepth, slotSize);
            int type = data.get(INT_LAYOUT, base + SLOT_TYPE_OFFSET);
            int length = receiveLengths[slot] - SLOT_PAYLOAD_OFFSET;
            count++;
            try {
                handler.onMessage(from, type, data.asSlice(base + SLOT_PAYLOAD_OFFSET, length));
            } finally {
                delivered++;
                repost(slot);
            }
        }
        return count;
    }

    private void repost(int slot) {
        try {
            if (!queue.postReceive(receiveCalls[slot])) {
                return;
            }
        } catch (IOException e) {
            liveness.fail("reposting receive slot " + slot + " failed: " + e.getMessage());
            return;
        }
        consumed++;
        publishConsumed(control, consumed); // release: the receive is posted before the peer can count on it
    }

    // ---------------------------------------------------------------- the send side

    /** Sends one message if the peer has a free receive buffer; returns once it is in that buffer. */
    boolean send(int type, MemorySegment payload, long offset, int length) {
        if (type <= 0) {
            throw new IllegalArgumentException("message type must be > 0, got " + type);
        }
        int max = slotSize - SLOT_PAYLOAD_OFFSET;
        if (length < 0 || length > max) {
            throw new IllegalArgumentException("message of " + length + " bytes exceeds the limit of " + max
                    + " bytes (rdma.maxMessageSize)");
        }
        long ticket;
        queue.lockQp();
        try {
            liveness.checkAlive();
            if (messagesSent >= peerRecvDepth + peerConsumed && !refreshCredits()) {
                return false;
            }
            ticket = queue.reserve(1);
            long slot = sendSlotOffset(ticket, sqDepth, recvDepth, slotSize);
            data.set(INT_LAYOUT, slot + SLOT_TYPE_OFFSET, type);
            MemorySegment.copy(payload, offset, data, slot + SLOT_PAYLOAD_OFFSET, length);
            postSlot(ticket, SLOT_PAYLOAD_OFFSET + length, "SEND");
        } finally {
            queue.unlockQp();
        }
        queue.awaitTicket(ticket, "SEND");
        return true;
    }

    /** Holding qpLock, after reserve: SENDs the first {@code bytes} of the send slot of {@code ticket}, signaled. */
    void postSlot(long ticket, int bytes, String operation) {
        QpEndpoint.aim(sendWr, data.address() + sendSlotOffset(ticket, sqDepth, recvDepth, slotSize), bytes,
                dataKey, 0, 0);
        queue.post(sendCall, sendWr, ticket, true, operation);
        messagesSent++;
    }

    /** Holding qpLock: RDMA-READs the peer's consumed count; true if the peer now has a free receive buffer. */
    private boolean refreshCredits() {
        long ticket = queue.flush();
        queue.awaitTicket(ticket, "RDMA_READ (credits)");
        peerConsumed = Math.max(peerConsumed, snapshot(control));
        return messagesSent < peerRecvDepth + peerConsumed;
    }

    /** After the QP is destroyed: frees the prepared calls. */
    void free() {
        if (sendCall != null) {
            sendCall.free();
        }
        if (receiveCalls != null) {
            for (SVCPostRecv call : receiveCalls) {
                if (call != null) {
                    call.free();
                }
            }
        }
    }
}
