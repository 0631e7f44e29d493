package io.fabricrpc.transport.rdma.verbs;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvQP;
import com.ibm.disni.verbs.IbvQPInitAttr;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaConnParam;
import com.ibm.disni.verbs.RdmaEventChannel;
import com.ibm.disni.verbs.SVCPollCq;
import io.fabricrpc.transport.rdma.nativelib.DisniNativeLibrary;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.LinkedList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One side of an RC connection built with DiSNI's raw verbs API, the way a transport would: own event channel,
 * PD, completion channel, CQ, QP and one registered 64 KiB buffer. Completions are reaped either by busy polling
 * or through the completion channel ({@code ibv_get_cq_event}), chosen per peer.
 */
final class VerbsPeer implements AutoCloseable {
    static final int BUFFER_SIZE = 64 * 1024;
    static final int ACCESS = IbvMr.IBV_ACCESS_LOCAL_WRITE | IbvMr.IBV_ACCESS_REMOTE_WRITE | IbvMr.IBV_ACCESS_REMOTE_READ;
    static final long TIMEOUT_MS = 10_000;

    final RdmaEventChannel channel;
    final RdmaCmId listenId;
    RdmaCmId id;
    IbvPd pd;
    IbvCompChannel compChannel;
    IbvCQ cq;
    IbvQP qp;
    final ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER_SIZE);
    IbvMr mr;
    final boolean eventDriven;
    private final int depth;
    private final int maxInline;
    private final IbvWC[] wcs = new IbvWC[16];
    private SVCPollCq poll;
    private final ArrayDeque<IbvWC> pending = new ArrayDeque<>();

    private VerbsPeer(boolean eventDriven, boolean listen, int depth, int maxInline) throws IOException {
        DisniNativeLibrary.load();
        this.eventDriven = eventDriven;
        this.depth = depth;
        this.maxInline = maxInline;
        this.channel = RdmaEventChannel.createEventChannel();
        RdmaCmId created = channel.createId(RdmaCm.RDMA_PS_TCP);
        if (listen) {
            listenId = created;
        } else {
            listenId = null;
            id = created;
        }
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new IbvWC();
        }
    }

    static VerbsPeer listen(InetSocketAddress address, boolean eventDriven) throws IOException {
        return listen(address, eventDriven, 64, 64);
    }

    /** @param depth send and receive queue depth; @param maxInline largest inline send */
    static VerbsPeer listen(InetSocketAddress address, boolean eventDriven, int depth, int maxInline) throws IOException {
        VerbsPeer p = new VerbsPeer(eventDriven, true, depth, maxInline);
        p.listenId.bindAddr(address);
        p.listenId.listen(8);
        return p;
    }

    /** Resolves and starts connecting; {@link #awaitEstablished()} completes it once the server accepted. */
    static VerbsPeer connect(InetSocketAddress address, boolean eventDriven) throws IOException {
        return connect(address, eventDriven, 64, 64);
    }

    static VerbsPeer connect(InetSocketAddress address, boolean eventDriven, int depth, int maxInline) throws IOException {
        VerbsPeer p = new VerbsPeer(eventDriven, false, depth, maxInline);
        p.id.resolveAddr(null, address, 2000);
        p.awaitEvent(RdmaCmEvent.EventType.RDMA_CM_EVENT_ADDR_RESOLVED);
        p.id.resolveRoute(2000);
        p.awaitEvent(RdmaCmEvent.EventType.RDMA_CM_EVENT_ROUTE_RESOLVED);
        p.allocate();
        RdmaConnParam param = new RdmaConnParam();
        param.setRetry_count((byte) 2);
        param.setRnr_retry_count((byte) 7);
        p.id.connect(param);
        return p;
    }

    /** Server side: takes the next CONNECT_REQUEST, allocates resources on the new id and accepts it. */
    void acceptNext() throws IOException {
        RdmaCmEvent request = awaitEvent(RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_REQUEST);
        id = request.getConnIdPriv();
        allocate();
        RdmaConnParam param = new RdmaConnParam();
        param.setRetry_count((byte) 2);
        param.setRnr_retry_count((byte) 7);
        id.accept(param);
    }

    void awaitEstablished() throws IOException {
        awaitEvent(RdmaCmEvent.EventType.RDMA_CM_EVENT_ESTABLISHED);
    }

    private void allocate() throws IOException {
        IbvContext context = id.getVerbs();
        if (context == null) {
            throw new IOException("cm id has no device context");
        }
        pd = context.allocPd();
        compChannel = context.createCompChannel();
        cq = context.createCQ(compChannel, 2 * depth, 0);
        if (eventDriven) {
            cq.reqNotification(false).execute().free();
        }
        IbvQPInitAttr attr = new IbvQPInitAttr();
        attr.cap().setMax_send_wr(depth);
        attr.cap().setMax_recv_wr(depth);
        attr.cap().setMax_send_sge(1);
        attr.cap().setMax_recv_sge(1);
        attr.cap().setMax_inline_data(maxInline);
        attr.setQp_type(IbvQP.IBV_QPT_RC);
        attr.setSend_cq(cq);
        attr.setRecv_cq(cq);
        qp = id.createQP(pd, attr);
        if (qp == null) {
            throw new IOException("createQP returned no QP");
        }
        mr = pd.regMr(buffer, ACCESS).execute().free().getMr();
        poll = cq.poll(wcs, wcs.length);
    }

    /** Waits for the next CM event, which must be {@code expected}. */
    RdmaCmEvent awaitEvent(RdmaCmEvent.EventType expected) throws IOException {
        RdmaCmEvent ev = nextEvent(TIMEOUT_MS);
        if (ev == null) {
            throw new IOException("timed out after " + TIMEOUT_MS + " ms waiting for " + expected);
        }
        if (ev.getEvent() != expected.ordinal()) {
            throw new IOException("expected " + expected + " but got " + RdmaCmEvent.EventType.values()[ev.getEvent()]);
        }
        return ev;
    }

    /** @return the next CM event (already acked), or null after {@code timeoutMs} */
    RdmaCmEvent nextEvent(long timeoutMs) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (true) {
            RdmaCmEvent ev = channel.getCmEvent(50);
            if (ev != null) {
                ev.ackEvent();
                return ev;
            }
            if (System.nanoTime() - deadline > 0) {
                return null;
            }
        }
    }

    /** Posts one signalled send-queue work request over {@code [offset, offset + length)} of the local buffer. */
    void post(int opcode, long wrId, int offset, int length, long remoteAddress, int rkey, int imm, int lkey) throws IOException {
        IbvSge sge = new IbvSge();
        sge.setAddr(mr.getAddr() + offset);
        sge.setLength(length);
        sge.setLkey(lkey);
        LinkedList<IbvSge> sges = new LinkedList<>();
        sges.add(sge);
        IbvSendWR wr = new IbvSendWR();
        wr.setWr_id(wrId);
        wr.setSg_list(sges);
        wr.setOpcode(opcode);
        wr.setSend_flags(IbvSendWR.IBV_SEND_SIGNALED);
        wr.setImm_data(imm);
        wr.getRdma().setRemote_addr(remoteAddress);
        wr.getRdma().setRkey(rkey);
        qp.postSend(List.of(wr), null).execute().free();
    }

    void post(int opcode, long wrId, int offset, int length, long remoteAddress, int rkey, int imm) throws IOException {
        post(opcode, wrId, offset, length, remoteAddress, rkey, imm, mr.getLkey());
    }

    /** Posts a receive for {@code length} bytes at {@code offset}; length 0 posts a WR without SGEs. */
    void postRecv(long wrId, int offset, int length) throws IOException {
        LinkedList<IbvSge> sges = new LinkedList<>();
        if (length > 0) {
            IbvSge sge = new IbvSge();
            sge.setAddr(mr.getAddr() + offset);
            sge.setLength(length);
            sge.setLkey(mr.getLkey());
            sges.add(sge);
        }
        IbvRecvWR wr = new IbvRecvWR();
        wr.setWr_id(wrId);
        wr.setSg_list(sges);
        qp.postRecv(List.of(wr), null).execute().free();
    }

    /** @return the next completion (status unchecked), by polling or through the completion channel */
    IbvWC awaitCompletion() throws IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
        while (pending.isEmpty()) {
            int n = poll.execute().getPolls();
            for (int i = 0; i < n; i++) {
                pending.add(wcs[i].clone());
            }
            if (!pending.isEmpty()) {
                break;
            }
            long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
            if (left <= 0) {
                throw new IOException("no completion within " + TIMEOUT_MS + " ms");
            }
            if (eventDriven) {
                // Re-arm after every event; a completion that raced the re-arm is caught by the poll above.
                if (compChannel.getCqEvent(cq, (int) Math.min(left, 1000))) {
                    cq.ackEvents(1);
                    cq.reqNotification(false).execute().free();
                }
            } else {
                Thread.onSpinWait();
            }
        }
        return pending.poll();
    }

    /** Awaits the next completion and requires success for {@code operation}. */
    IbvWC awaitSuccess(String operation) throws IOException {
        IbvWC wc = awaitCompletion();
        WorkCompletionException.check(wc, operation);
        return wc;
    }

    @Override
    public void close() throws IOException {
        if (poll != null) {
            poll.free();
        }
        if (id != null) {
            id.disconnect();
            if (qp != null) {
                id.destroyQP();
            }
            id.destroyId();
        }
        if (mr != null && mr.isOpen()) {
            mr.deregMr().execute().free();
        }
        if (cq != null) {
            cq.destroyCQ();
        }
        if (compChannel != null) {
            compChannel.destroyCompChannel();
        }
        if (pd != null) {
            try {
                pd.deallocPd();
            } catch (Exception e) {
                throw new IOException("deallocPd failed: " + e, e);
            }
        }
        if (listenId != null) {
            listenId.destroyId();
        }
        channel.destroyEventChannel();
    }
}
