package io.fabricrpc.transport.rdma.spi;

import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.SVCPostSend;
import io.fabricrpc.api.RemoteRegion;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static io.fabricrpc.transport.rdma.spi.LinkMemoryDescriptor.LONG_LAYOUT;
import static io.fabricrpc.transport.rdma.spi.LinkMemoryDescriptor.scratchOffset;

/**
 * The posting half of the seven one-sided operations, once {@link RdmaLink} checked their regions: which WRITEs and
 * READs each makes, from which bytes (the caller's or a scratch copy), in which order.
 *
 * <p>Invariant: an operation's requests are numbered and posted under one {@code qpLock} hold, so a pair's
 * publishing WRITE is the later WR of the QP; the scratch slot of ticket {@code t} ({@code t mod sqDepth}) is
 * rewritten only once {@code t} left the send-queue window. Owner: posters under {@code qpLock} (the prepared
 * calls). On a loopback link each operation completes before it returns.
 */
final class RdmaWrites {
    /** Scatter-gather entries of {@link #writeFirstByteAs}'s WRITE; the QPs are created with at least this many. */
    static final int GATHER_SGES = 2;

    private final RdmaSendQueue queue;
    private final RdmaLiveness liveness;
    private final RdmaHandshake handshake; // loopback, known before the link is ready
    private final MemorySegment data; // its scratch slots
    private final int dataKey;
    private final int sqDepth;

    // ---- posters, under qpLock: prepared when the QP is set up
    private SVCPostSend writeCall;
    private SVCPostSend.SendWRMod writeWr;
    private SVCPostSend readCall;
    private SVCPostSend.SendWRMod readWr;
    private SVCPostSend pairCall; // two chained WRITEs, one doorbell: data, then what publishes it
    private SVCPostSend.SendWRMod pairFirstWr;
    private SVCPostSend.SendWRMod pairSecondWr;
    private SVCPostSend gatherCall; // one WRITE of a byte of scratch, then the source after its first byte
    private SVCPostSend.SendWRMod gatherWr;

    RdmaWrites(RdmaSendQueue queue, RdmaLiveness liveness, RdmaHandshake handshake, MemorySegment data, int dataKey,
               int sqDepth) {
        this.queue = queue;
        this.liveness = liveness;
        this.handshake = handshake;
        this.data = data;
        this.dataKey = dataKey;
        this.sqDepth = sqDepth;
    }

    void prepare(QpEndpoint endpoint) throws IOException {
        writeCall = endpoint.prepareSend(IbvSendWR.IBV_WR_RDMA_WRITE, 1, 1, dataKey);
        writeWr = writeCall.getWrMod(0);
        readCall = endpoint.prepareSend(IbvSendWR.IBV_WR_RDMA_READ, 1, 1, dataKey);
        readWr = readCall.getWrMod(0);
        pairCall = endpoint.prepareSend(IbvSendWR.IBV_WR_RDMA_WRITE, 2, 1, dataKey);
        pairFirstWr = pairCall.getWrMod(0);
        pairSecondWr = pairCall.getWrMod(1);
        gatherCall = endpoint.prepareSend(IbvSendWR.IBV_WR_RDMA_WRITE, 1, GATHER_SGES, dataKey);
        gatherWr = gatherCall.getWrMod(0);
    }

    long write(RdmaLocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length) {
        return postOne(writeCall, writeWr, src.address() + srcOffset, (int) length, src.lkey(),
                dst.address() + dstOffset, dst.key(), "RDMA_WRITE");
    }

    long writeLong(RemoteRegion dst, long dstOffset, long value) {
        long ticket;
        queue.lockQp();
        try {
            liveness.checkAlive();
            ticket = queue.reserve(1);
            long scratch = scratchOffset(ticket, sqDepth);
            // Plain store: the post below is a native call that the HCA (or rxe) reads the WR and data after.
            data.set(LONG_LAYOUT, scratch, value);
            QpEndpoint.aim(writeWr, data.address() + scratch, Long.BYTES, dataKey, dst.address() + dstOffset,
                    dst.key());
            queue.post(writeCall, writeWr, ticket, handshake.loopback(), "RDMA_WRITE (writeLong)");
        } finally {
            queue.unlockQp();
        }
        return completeIfLoopback(ticket, "RDMA_WRITE (writeLong)");
    }

    long writeAndFlag(RdmaLocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length,
                      long flagOffset, long flagValue) {
        long flagTicket;
        queue.lockQp();
        try {
            liveness.checkAlive();
            flagTicket = queue.reserve(2);
            long scratch = scratchOffset(flagTicket, sqDepth);
            data.set(LONG_LAYOUT, scratch, flagValue); // plain: the post below is a native call the device reads after
            postPair(flagTicket, src.address() + srcOffset, (int) length, src.lkey(), dst.address() + dstOffset,
                    data.address() + scratch, Long.BYTES, dataKey, dst.address() + flagOffset, dst.key(),
                    "RDMA_WRITE pair (writeAndFlag)");
        } finally {
            queue.unlockQp();
        }
        return completeIfLoopback(flagTicket, "RDMA_WRITE pair (writeAndFlag)");
    }

    /** {@code length > 1}: a 1-byte publication is a plain {@link #write}. */
    long writePublished(RdmaLocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length) {
        long flagTicket;
        queue.lockQp();
        try {
            liveness.checkAlive();
            flagTicket = queue.reserve(2);
            // The rest, then the first byte as its own 1-byte WRITE: a later WR of the QP, so placed after the rest,
            // and a single byte, which no responder can tear (rxe copies wider WRITEs byte by byte).
            postPair(flagTicket, src.address() + srcOffset + 1, (int) length - 1, src.lkey(),
                    dst.address() + dstOffset + 1, src.address() + srcOffset, 1, src.lkey(), dst.address() + dstOffset,
                    dst.key(), "RDMA_WRITE pair (writePublished)");
        } finally {
            queue.unlockQp();
        }
        return completeIfLoopback(flagTicket, "RDMA_WRITE pair (writePublished)");
    }

    long writeFirstByteAs(RdmaLocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length,
                          byte first) {
        long ticket;
        queue.lockQp();
        try {
            liveness.checkAlive();
            ticket = queue.reserve(1);
            long scratch = scratchOffset(ticket, sqDepth);
            data.set(ValueLayout.JAVA_BYTE, scratch, first); // plain: the post below reads it after
            QpEndpoint.aim(gatherWr, data.address() + scratch, 1, dataKey, dst.address() + dstOffset, dst.key());
            QpEndpoint.setSge(gatherWr.getSgeMod(1), src.address() + srcOffset + 1, (int) length - 1, src.lkey());
            queue.post(gatherCall, gatherWr, ticket, handshake.loopback(), "RDMA_WRITE (writeFirstByteAs)");
        } finally {
            queue.unlockQp();
        }
        return completeIfLoopback(ticket, "RDMA_WRITE (writeFirstByteAs)");
    }

    long writePublishedInline(MemorySegment src, long srcOffset, RemoteRegion dst, long dstOffset, int length) {
        long ticket;
        queue.lockQp();
        try {
            liveness.checkAlive();
            ticket = queue.reserve(length == 1 ? 1 : 2);
            long scratch = scratchOffset(ticket, sqDepth);
            // Plain copy: the post below is a native call that the HCA (or rxe) reads the scratch bytes after.
            MemorySegment.copy(src, srcOffset, data, scratch, length);
            long from = data.address() + scratch;
            if (length == 1) {
                QpEndpoint.aim(writeWr, from, 1, dataKey, dst.address() + dstOffset, dst.key());
                queue.post(writeCall, writeWr, ticket, handshake.loopback(), "RDMA_WRITE (writePublishedInline)");
            } else {
                // As writePublished: the rest, then the first byte as its own later 1-byte WRITE.
                postPair(ticket, from + 1, length - 1, dataKey, dst.address() + dstOffset + 1, from, 1, dataKey,
                        dst.address() + dstOffset, dst.key(), "RDMA_WRITE pair (writePublishedInline)");
            }
        } finally {
            queue.unlockQp();
        }
        return completeIfLoopback(ticket, "RDMA_WRITE (writePublishedInline)");
    }

    long read(RemoteRegion src, long srcOffset, RdmaLocalRegion dst, long dstOffset, long length) {
        return postOne(readCall, readWr, dst.address() + dstOffset, (int) length, dst.lkey(),
                src.address() + srcOffset, src.key(), "RDMA_READ");
    }

    /** Numbers and posts one WRITE or READ of a prepared call between {@code local} and {@code remote}. */
    private long postOne(SVCPostSend call, SVCPostSend.SendWRMod wr, long local, int length, int lkey, long remote,
                         int rkey, String operation) {
        long ticket;
        queue.lockQp();
        try {
            liveness.checkAlive();
            ticket = queue.reserve(1);
            QpEndpoint.aim(wr, local, length, lkey, remote, rkey);
            queue.post(call, wr, ticket, handshake.loopback(), operation);
        } finally {
            queue.unlockQp();
        }
        return completeIfLoopback(ticket, operation);
    }

    /** Holding qpLock, after {@code reserve(2)}: two chained WRITEs to one key, numbered up to {@code secondTicket}. */
    private void postPair(long secondTicket, long firstLocal, int firstLength, int firstLkey, long firstRemote,
                          long secondLocal, int secondLength, int secondLkey, long secondRemote, int rkey,
                          String operation) {
        QpEndpoint.aim(pairFirstWr, firstLocal, firstLength, firstLkey, firstRemote, rkey);
        QpEndpoint.aim(pairSecondWr, secondLocal, secondLength, secondLkey, secondRemote, rkey);
        queue.postPair(pairCall, pairFirstWr, pairSecondWr, secondTicket, handshake.loopback(), operation);
    }

    /** A loopback link's reader is this process, possibly looking right after the call: complete before returning. */
    private long completeIfLoopback(long ticket, String operation) {
        if (handshake.loopback()) {
            queue.awaitTicket(ticket, operation);
        }
        return ticket;
    }

    /** After the QP is destroyed: frees the prepared calls. */
    void free() {
        for (SVCPostSend call : new SVCPostSend[] {writeCall, readCall, pairCall, gatherCall}) {
            if (call != null) {
                call.free();
            }
        }
    }
}
