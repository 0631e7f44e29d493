package io.fabricrpc.transport.rdma.endpoint;

import com.ibm.disni.RdmaActiveEndpointGroup;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmId;
import io.fabricrpc.transport.rdma.verbs.WorkCompletionException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.LinkedList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** An endpoint of DiSNI's endpoint API with one registered 64 KiB buffer; completions are queued by the CQ thread. */
final class TestEndpoint extends BoundedConnectEndpoint {
    static final int BUFFER_SIZE = 64 * 1024;
    static final long TIMEOUT_MS = 20_000;

    final ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER_SIZE);
    private final LinkedBlockingQueue<IbvWC> completions = new LinkedBlockingQueue<>();
    private volatile IbvMr mr;

    TestEndpoint(RdmaActiveEndpointGroup<TestEndpoint> group, RdmaCmId id, boolean serverSide) throws IOException {
        super(group, id, serverSide);
    }

    /** Registers the buffer; call once the endpoint is connected or accepted. */
    IbvMr register() throws IOException {
        if (mr == null) {
            mr = registerMemory(buffer).execute().free().getMr();
        }
        return mr;
    }

    IbvMr mr() {
        return mr;
    }

    @Override
    public void dispatchCqEvent(IbvWC wc) {
        completions.add(wc.clone()); // runs on DiSNI's CQ thread; the queue hands the copy to the test thread
    }

    void post(int opcode, long wrId, int offset, int length, long remoteAddress, int rkey, int imm) throws IOException {
        IbvSge sge = new IbvSge();
        sge.setAddr(mr.getAddr() + offset);
        sge.setLength(length);
        sge.setLkey(mr.getLkey());
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
        postSend(List.of(wr)).execute().free();
    }

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
        postRecv(List.of(wr)).execute().free();
    }

    /** @return the next completion of this endpoint, checked for success of {@code operation} */
    IbvWC await(String operation) throws IOException {
        IbvWC wc;
        try {
            wc = completions.poll(TIMEOUT_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted waiting for " + operation, e);
        }
        if (wc == null) {
            throw new IOException("no completion for " + operation + " within " + TIMEOUT_MS + " ms");
        }
        WorkCompletionException.check(wc, operation);
        return wc;
    }
}
