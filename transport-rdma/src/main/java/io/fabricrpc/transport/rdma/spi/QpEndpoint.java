package io.fabricrpc.transport.rdma.spi;

import com.ibm.disni.RdmaEndpoint;
import com.ibm.disni.RdmaEndpointGroup;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.SVCPostSend;
import io.fabricrpc.transport.rdma.endpoint.ConnectDeadline;

import java.io.IOException;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.LinkedList;
import java.util.List;

/**
 * The DiSNI endpoint (one RC QP, its own CQ polled by the link's users) behind one {@link RdmaLink}.
 *
 * <p>Two things DiSNI's {@code RdmaEndpoint} lacks: a connect that ends within its timeout (DiSNI waits forever on
 * REJECTED, UNREACHABLE and the other failure events; here the CM thread or a watchdog interrupts the waiting
 * thread), and forwarding of DISCONNECTED to the link so that it fails. Also the link parts' glue for DiSNI's
 * prepared posts ({@link #prepareSend}, {@link #aim}).
 */
final class QpEndpoint extends RdmaEndpoint {
    private volatile RdmaLink link;
    private final ConnectDeadline deadline = new ConnectDeadline();
    private boolean cqClosed; // guarded by this

    QpEndpoint(RdmaEndpointGroup<QpEndpoint> group, RdmaCmId id, boolean serverSide) throws IOException {
        super(group, id, serverSide);
    }

    RdmaLink link() {
        return link;
    }

    void attach(RdmaLink owner) {
        this.link = owner; // volatile: the CM thread reads it when an event arrives
    }

    /** Called by DiSNI once the QP exists, before connect or accept: the receive ring must be posted by then. */
    @Override
    protected synchronized void init() throws IOException {
        RdmaLink owner = link;
        if (owner == null) {
            throw new IOException("QP endpoint has no link attached");
        }
        owner.postInitialReceives();
    }

    @Override
    public void connect(SocketAddress destination, int timeoutMs) throws Exception {
        deadline.connect(destination, timeoutMs, () -> super.connect(destination, timeoutMs), this::isConnected);
    }

    @Override
    public synchronized void dispatchCmEvent(RdmaCmEvent event) throws IOException {
        int type = event.getEvent();
        if (deadline.onCmEvent(type)) {
            return; // a connect failure, handed to the connecting thread
        }
        if (type == RdmaCmEvent.EventType.RDMA_CM_EVENT_DISCONNECTED.ordinal()) {
            RdmaLink owner = link;
            if (owner != null) {
                owner.fail("the peer closed the connection (RDMA_CM_EVENT_DISCONNECTED)");
            }
        }
        super.dispatchCmEvent(event);
    }

    /** Disconnects, destroys the QP and the CM id, then the CQ DiSNI's passive group made for this endpoint. */
    @Override
    public synchronized void close() throws IOException, InterruptedException {
        super.close();
        if (getCqProvider() != null && !cqClosed) {
            cqClosed = true; // DiSNI's group closes endpoints again on its own close: destroy the CQ once
            getCqProvider().close();
        }
    }

    /** A reusable post of {@code requests} chained WRs of {@code opcode} with {@code sges} gather entries each. */
    SVCPostSend prepareSend(int opcode, int requests, int sges, int lkey) throws IOException {
        List<IbvSendWR> wrs = new ArrayList<>();
        for (int r = 0; r < requests; r++) {
            LinkedList<IbvSge> list = new LinkedList<>();
            for (int s = 0; s < sges; s++) {
                IbvSge sge = new IbvSge();
                sge.setLkey(lkey);
                list.add(sge);
            }
            IbvSendWR wr = new IbvSendWR();
            wr.setOpcode(opcode);
            wr.setSg_list(list);
            wrs.add(wr);
        }
        return postSend(wrs);
    }

    static void setSge(SVCPostSend.SgeMod sge, long address, int length, int lkey) {
        sge.setAddr(address);
        sge.setLength(length);
        sge.setLkey(lkey);
    }

    /** Points a prepared WR's first gather entry at local bytes and its RDMA fields at remote ones. */
    static void aim(SVCPostSend.SendWRMod wr, long local, int length, int lkey, long remote, int rkey) {
        setSge(wr.getSgeMod(0), local, length, lkey);
        SVCPostSend.RdmaMod rdma = wr.getRdmaMod();
        rdma.setRemote_addr(remote);
        rdma.setRkey(rkey);
    }
}
