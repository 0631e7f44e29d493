package io.fabricrpc.transport.rdma.spi;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import io.fabricrpc.transport.EndpointAddress;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.transport.MessageHandler;
import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.api.TransportException;
import io.fabricrpc.transport.rdma.verbs.WorkCompletionException;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.LinkedList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

import static io.fabricrpc.transport.rdma.spi.LinkMemoryDescriptor.*;

/**
 * A link over one RC queue pair.
 *
 * <p><b>Ordering.</b> Every operation of a link is a work request on the same RC QP. An RC QP executes its send queue
 * in order and the responder processes the request packets in PSN order, so writes (and the 8-byte RDMA WRITE of
 * {@link #writeLong}) are placed in the peer's memory in issue order: on rxe the responder copies each packet into
 * memory before it processes the next one; on InfiniBand/RoCE HCAs writes of one QP are placed in order in practice
 * (PCIe posted writes are not reordered), though the IB specification itself only promises order for the completion
 * of whole messages. Protocols rely on exactly this: data written, then a flag written later on the same link. The
 * flag is 8 aligned bytes inside one packet, but rxe copies a WRITE into memory byte by byte, so a reader may see it
 * torn: publications therefore use a 1-byte flag ({@link #writePublished}), and 8-byte counters are read by peers that
 * can reject impossible values. Writes from different threads are
 * ordered by the QP lock's order of posting, which the SPI does not promise anyway.
 *
 * <p><b>Completion tickets and selective signaling</b> (Seriema §4.1). Each work request gets the next WR number as
 * its ticket. Only every {@code signalInterval}-th request is signaled (plus those that must be: sends, flushes,
 * loopback operations); a signaled completion with WR number {@code w} means every request {@code <= w} has
 * completed, since an RC send queue completes in order. {@link #isComplete} is true once such a completion with
 * {@code w >= ticket} was reaped; {@link #awaitCompletion} posts a signaled flush (an 8-byte RDMA READ of the peer's
 * consumed counter) if no signaled request at or after the ticket is outstanding, then polls. At most
 * {@code sqDepth} requests are outstanding: a poster whose request would exceed that reaps completions first; since
 * {@code signalInterval < sqDepth}, a full window always holds a signaled request, so this terminates.
 *
 * <p><b>Two-sided messages and credits.</b> Each side posts {@code recvDepth} receive buffers of one slot each, in
 * ring order, and reposts a slot after {@link #deliver delivering} it, so receives complete in ring order. It counts
 * reposted slots in the {@code consumed} word of its control block. A sender may have at most
 * {@code recvDepth + consumed} messages sent; when its cached view says the peer has no free buffer it refreshes the
 * view with a synchronous RDMA READ of that word, and returns {@code false} if there is still none. A SEND therefore
 * never meets a missing receive (no RNR). {@link #send} returns once the SEND completed, that is once the message is
 * in the peer's receive buffer, so the peer's next {@code pollMessages} sees it.
 *
 * <p><b>Threads and locks.</b> Thread-safe. This first version posts under one lock per QP ({@code qpLock}); the CQ
 * is reaped by whichever thread polls (under {@code cqLock}, {@code tryLock}, never while waiting for the QP lock),
 * and {@code completed} is a volatile that any thread reads. Receive buffers are reposted only by the thread that
 * delivers messages (the transport's single {@code pollMessages} caller), and by the reaper for the handshake only,
 * before the link is published. Prepared DiSNI calls (one per operation kind, one per receive slot) are reused: the
 * hot path allocates nothing.
 *
 * <p><b>Flush number.</b> {@code completed} is the link's flush number in WR units: it only grows, it is written by
 * whichever thread reaps (under {@code cqLock.tryLock}, so no thread ever waits for another to advance it), and any
 * thread reads it with one volatile load. Memory tagged with a ticket {@code <= completed} is reusable: a circular
 * buffer frees every unit tagged below the new value with that single store and no per-buffer bookkeeping.
 * Posting itself is serialized per QP ({@code qpLock}, held only to number and post one request): the WR number must
 * be assigned in posting order for "a signaled completion covers every earlier number" to hold, and the verbs
 * provider serializes posts to one QP internally anyway.
 *
 * <p><b>Liveness.</b> The link fails on an error completion, a CM DISCONNECTED event, an operation that does not
 * complete within {@code rdma.operationTimeoutMillis}, or the close of either endpoint; {@link #checkAlive} is a
 * volatile read. A silent peer (host gone, no CM event) is found by the transport's {@linkplain #heartbeat
 * heartbeat}: an idle link is probed with a signaled 8-byte READ every {@code rdma.heartbeatMillis}; a probe to a
 * vanished host ends in a retry-exceeded error completion, and requests that make no progress for
 * {@code rdma.operationTimeoutMillis} fail the link even when no thread waits for them.
 */
final class RdmaLink implements Link, io.fabricrpc.transport.LinkStatistics {
    private static final long RECEIVE_TAG = 1L << 62;
    private static final java.lang.invoke.VarHandle POSTED;
    private static final java.lang.invoke.VarHandle SIGNALED_COMPLETIONS;
    private static final java.lang.invoke.VarHandle COMPLETION_ERRORS;

    static {
        try {
            java.lang.invoke.MethodHandles.Lookup lookup = java.lang.invoke.MethodHandles.lookup();
            POSTED = lookup.findVarHandle(RdmaLink.class, "posted", long.class);
            SIGNALED_COMPLETIONS = lookup.findVarHandle(RdmaLink.class, "signaledCompletions", long.class);
            COMPLETION_ERRORS = lookup.findVarHandle(RdmaLink.class, "completionErrors", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
    private static final int POLL_BATCH = 16;
    /** Scatter-gather entries of {@link #writeFirstByteAs}'s WRITE; the QPs are created with at least this many. */
    static final int GATHER_SGES = 2;

    private final RdmaTransport transport;
    final QpEndpoint endpoint;
    private final int sqDepth;
    private final int recvDepth;
    private final int signalInterval;
    /**
     * More requests than this outstanding means the link is backlogged ({@link #isBacklogged}): half the send queue,
     * but never below the signal interval, since up to that many unsignaled requests look outstanding on an idle link.
     */
    private final int backlogThreshold;
    private final int slotSize;
    private final long timeoutNanos;
    private final IdleStrategy idle = YieldingIdleStrategy.INSTANCE;

    private final Arena arena = Arena.ofShared();
    private final MemorySegment control;
    private final MemorySegment data;
    private final IbvMr controlMr;
    private final IbvMr dataMr;

    private final ReentrantLock qpLock = new ReentrantLock();
    private final ReentrantLock cqLock = new ReentrantLock();

    // Guarded by qpLock.
    private long posted;
    // Counters file (read opaque): the reaper's counts, under cqLock.
    private long signaledCompletions;
    private long completionErrors;
    private long lastSignaled;
    private long messagesSent;
    private long peerConsumed;
    private long signaledCount;
    private SVCPostSend writeCall;
    private SVCPostSend readCall;
    private SVCPostSend sendCall;
    private SVCPostSend pairCall;
    private SVCPostSend gatherCall;
    private SVCPostSend.SendWRMod gatherWr;
    private SVCPostSend.SendWRMod pairFirstWr;
    private SVCPostSend.SendWRMod pairSecondWr;
    private SVCPostSend.SendWRMod writeWr;
    private SVCPostSend.SendWRMod readWr;
    private SVCPostSend.SendWRMod sendWr;

    // Guarded by cqLock; completed and receivesCompleted are published to readers by their volatile writes.
    private SVCPollCq pollCall;
    private IbvWC[] completions;
    private volatile long completed;
    private volatile long receivesCompleted;
    private final int[] receiveLengths;

    // Owned by the delivering thread (and by the reaper before helloDone).
    private SVCPostRecv[] receiveCalls;
    private long delivered;
    private long consumed;

    // Peer identity and control block: written before helloDone (volatile) publishes them.
    private volatile boolean qpReady;
    private volatile boolean helloDone;
    private long peerId;
    private EndpointAddress peerAddress;
    private long peerControlAddress;
    private int peerControlKey;
    private int peerRecvDepth;
    private boolean loopback;

    private volatile String failure; // set once, by fail()
    private static final java.lang.invoke.VarHandle FAILURE;

    static {
        try {
            FAILURE = java.lang.invoke.MethodHandles.lookup().findVarHandle(RdmaLink.class, "failure", String.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
    private boolean resourcesClosed; // guarded by qpLock and cqLock together
    private boolean qpDestroyed; // guarded by qpLock and cqLock together
    private boolean memoryReleased; // guarded by qpLock and cqLock together

    RdmaLink(RdmaTransport transport, QpEndpoint endpoint, long expectedPeerId) {
        this.transport = transport;
        this.endpoint = endpoint;
        this.sqDepth = transport.sqDepth();
        this.recvDepth = transport.recvDepth();
        this.signalInterval = transport.signalInterval();
        this.backlogThreshold = Math.max(sqDepth / 2, signalInterval);
        this.slotSize = slotSize(transport.maxMessageSize());
        this.timeoutNanos = transport.operationTimeoutMillis() * 1_000_000L;
        this.peerId = expectedPeerId;
        this.receiveLengths = new int[recvDepth];
        this.control = arena.allocate(CONTROL_LENGTH, 4096);
        this.data = arena.allocate(dataLength(sqDepth, recvDepth, slotSize), 4096);
        try {
            this.controlMr = transport.register(control, IbvMr.IBV_ACCESS_LOCAL_WRITE | IbvMr.IBV_ACCESS_REMOTE_READ);
            this.dataMr = transport.register(data, IbvMr.IBV_ACCESS_LOCAL_WRITE);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        endpoint.attach(this);
    }

    /** Runs inside DiSNI's resource allocation, once the QP exists and before the connection is made. */
    void postInitialReceives() throws IOException {
        receiveCalls = new SVCPostRecv[recvDepth];
        for (int slot = 0; slot < recvDepth; slot++) {
            IbvSge sge = new IbvSge();
            sge.setAddr(data.address() + receiveSlotOffset(slot, sqDepth, slotSize));
            sge.setLength(slotSize);
            sge.setLkey(dataMr.getLkey());
            LinkedList<IbvSge> sges = new LinkedList<>();
            sges.add(sge);
            IbvRecvWR wr = new IbvRecvWR();
            wr.setWr_id(RECEIVE_TAG | slot);
            wr.setSg_list(sges);
            receiveCalls[slot] = endpoint.postRecv(List.of(wr));
            receiveCalls[slot].execute(); // ring order: receives complete in slot order 0, 1, ... and around
        }
        writeCall = prepare(IbvSendWR.IBV_WR_RDMA_WRITE);
        writeWr = writeCall.getWrMod(0);
        readCall = prepare(IbvSendWR.IBV_WR_RDMA_READ);
        readWr = readCall.getWrMod(0);
        sendCall = prepare(IbvSendWR.IBV_WR_SEND);
        sendWr = sendCall.getWrMod(0);
        pairCall = preparePair();
        pairFirstWr = pairCall.getWrMod(0);
        pairSecondWr = pairCall.getWrMod(1);
        gatherCall = prepareGather();
        gatherWr = gatherCall.getWrMod(0);
        completions = new IbvWC[POLL_BATCH];
        for (int i = 0; i < POLL_BATCH; i++) {
            completions[i] = new IbvWC();
        }
        pollCall = endpoint.getCqProvider().getCQ().poll(completions, POLL_BATCH);
        qpReady = true; // volatile: publishes the prepared calls to the threads that reap and post
    }

    private SVCPostSend prepare(int opcode) throws IOException {
        IbvSge sge = new IbvSge();
        sge.setLkey(dataMr.getLkey());
        LinkedList<IbvSge> sges = new LinkedList<>();
        sges.add(sge);
        IbvSendWR wr = new IbvSendWR();
        wr.setOpcode(opcode);
        wr.setSg_list(sges);
        return endpoint.postSend(List.of(wr));
    }

    /** Two chained RDMA WRITEs posted with one call (one doorbell): data, then the flag that publishes it. */
    private SVCPostSend preparePair() throws IOException {
        List<IbvSendWR> wrs = new java.util.ArrayList<>();
        for (int i = 0; i < 2; i++) {
            IbvSge sge = new IbvSge();
            sge.setLkey(dataMr.getLkey());
            LinkedList<IbvSge> sges = new LinkedList<>();
            sges.add(sge);
            IbvSendWR wr = new IbvSendWR();
            wr.setOpcode(IbvSendWR.IBV_WR_RDMA_WRITE);
            wr.setSg_list(sges);
            wrs.add(wr);
        }
        return endpoint.postSend(wrs);
    }

    /** One RDMA WRITE gathering two pieces: a byte of the link's own, then the source after its first byte. */
    private SVCPostSend prepareGather() throws IOException {
        LinkedList<IbvSge> sges = new LinkedList<>();
        for (int i = 0; i < GATHER_SGES; i++) {
            IbvSge sge = new IbvSge();
            sge.setLkey(dataMr.getLkey());
            sges.add(sge);
        }
        IbvSendWR wr = new IbvSendWR();
        wr.setOpcode(IbvSendWR.IBV_WR_RDMA_WRITE);
        wr.setSg_list(sges);
        return endpoint.postSend(List.of(wr));
    }

    // ---------------------------------------------------------------- handshake

    /** Sends this side's HELLO (the first SEND on the QP); the caller then {@linkplain #awaitHello awaits} the peer's. */
    void sendHello() {
        long ticket;
        qpLock.lock();
        try {
            checkAlive();
            ticket = reserve();
            long slot = sendSlotOffset(ticket, sqDepth, recvDepth, slotSize);
            long p = slot + SLOT_PAYLOAD_OFFSET;
            data.set(INT_LAYOUT, slot + SLOT_TYPE_OFFSET, HELLO_TYPE);
            data.set(LONG_LAYOUT, p + HELLO_ENDPOINT_ID, transport.endpointId());
            data.set(LONG_LAYOUT, p + HELLO_CONTROL_ADDRESS, controlMr.getAddr());
            data.set(INT_LAYOUT, p + HELLO_CONTROL_KEY, controlMr.getRkey());
            data.set(INT_LAYOUT, p + HELLO_RECV_DEPTH, recvDepth);
            data.set(INT_LAYOUT, p + HELLO_IPV4, transport.ipv4());
            data.set(INT_LAYOUT, p + HELLO_PORT, transport.port());
            data.set(INT_LAYOUT, p + HELLO_SLOT_SIZE, slotSize);
            postSend(sendCall, sendWr, ticket, true, data.address() + slot, SLOT_PAYLOAD_OFFSET + HELLO_LENGTH,
                    dataMr.getLkey(), 0, 0, "SEND (hello)");
            messagesSent++;
        } finally {
            qpLock.unlock();
        }
        awaitTicket(ticket, "SEND (hello)");
    }

    /** Reaps until the peer's HELLO arrived (bounded by {@code rdma.connectTimeoutMillis}). */
    void awaitHello(long timeoutMillis) {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (!helloDone) {
            reap();
            checkAlive();
            if (System.nanoTime() - deadline > 0) {
                fail("no handshake from the peer within " + timeoutMillis + " ms (rdma.connectTimeoutMillis)");
                checkAlive();
            }
            idle.idle();
        }
    }

    boolean isReady() {
        return helloDone;
    }

    /** Reaper thread, under cqLock: the first receive on the QP is the peer's HELLO. */
    private void onHello(int slot, int length) {
        long p = receiveSlotOffset(slot, sqDepth, slotSize) + SLOT_PAYLOAD_OFFSET;
        int type = data.get(INT_LAYOUT, receiveSlotOffset(slot, sqDepth, slotSize) + SLOT_TYPE_OFFSET);
        if (slot != 0 || type != HELLO_TYPE || length != SLOT_PAYLOAD_OFFSET + HELLO_LENGTH) {
            fail("protocol error: first message on the QP is not a handshake (slot " + slot + ", type " + type
                    + ", " + length + " bytes)");
            return;
        }
        long helloId = data.get(LONG_LAYOUT, p + HELLO_ENDPOINT_ID);
        int peerSlotSize = data.get(INT_LAYOUT, p + HELLO_SLOT_SIZE);
        if (peerSlotSize != slotSize) {
            fail("peer " + Long.toHexString(helloId) + " uses messages of " + (peerSlotSize - SLOT_PAYLOAD_OFFSET)
                    + " bytes, this endpoint " + (slotSize - SLOT_PAYLOAD_OFFSET) + " (rdma.maxMessageSize must match)");
            return;
        }
        if (peerId != 0 && helloId != peerId) {
            fail("the address named endpoint " + Long.toHexString(peerId) + " but the peer there is "
                    + Long.toHexString(helloId));
            return;
        }
        peerId = helloId;
        peerControlAddress = data.get(LONG_LAYOUT, p + HELLO_CONTROL_ADDRESS);
        peerControlKey = data.get(INT_LAYOUT, p + HELLO_CONTROL_KEY);
        peerRecvDepth = data.get(INT_LAYOUT, p + HELLO_RECV_DEPTH);
        peerAddress = encodePeer(data.get(INT_LAYOUT, p + HELLO_IPV4), data.get(INT_LAYOUT, p + HELLO_PORT), helloId);
        loopback = helloId == transport.endpointId();
        try {
            receiveCalls[slot].execute();
        } catch (IOException e) {
            fail("reposting receive slot " + slot + " failed: " + e.getMessage());
            return;
        }
        receivesCompleted = 1; // the handshake took slot 0 of the ring
        delivered = 1;
        consumed = 1;
        publishConsumed(control, consumed);
        helloDone = true; // volatile: publishes the peer fields above to every thread that sees the link ready
    }

    private static EndpointAddress encodePeer(int ipv4, int port, long id) {
        try {
            byte[] ip = ByteBuffer.allocate(4).putInt(ipv4).array();
            return RdmaAddresses.encode((Inet4Address) InetAddress.getByAddress(ip), port, id);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    // ---------------------------------------------------------------- one-sided operations

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
        RdmaLocalRegion source = local(src, "write", srcOffset, length);
        checkRemote(dst, "write", dstOffset, length, true);
        long ticket;
        qpLock.lock();
        try {
            checkAlive();
            ticket = reserve();
            postSend(writeCall, writeWr, ticket, loopback, source.address() + srcOffset, (int) length, source.lkey(),
                    dst.address() + dstOffset, dst.key(), "RDMA_WRITE");
        } finally {
            qpLock.unlock();
        }
        return synchronousIfLoopback(ticket, "RDMA_WRITE");
    }

    @Override
    public long writeLong(RemoteRegion dst, long dstOffset, long value) {
        if ((dstOffset & 7) != 0) {
            throw new TransportException("writeLong at unaligned offset " + dstOffset + " of " + dst);
        }
        checkRemote(dst, "writeLong", dstOffset, Long.BYTES, true);
        long ticket;
        qpLock.lock();
        try {
            checkAlive();
            ticket = reserve();
            long scratch = scratchOffset(ticket, sqDepth);
            // Plain store: the post below is a native call that the HCA (or rxe) reads the WR and data after.
            data.set(LONG_LAYOUT, scratch, value);
            postSend(writeCall, writeWr, ticket, loopback, data.address() + scratch, Long.BYTES, dataMr.getLkey(),
                    dst.address() + dstOffset, dst.key(), "RDMA_WRITE (writeLong)");
        } finally {
            qpLock.unlock();
        }
        return synchronousIfLoopback(ticket, "RDMA_WRITE (writeLong)");
    }

    @Override
    public long writeAndFlag(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length,
                             long flagOffset, long flagValue) {
        if ((flagOffset & 7) != 0) {
            throw new TransportException("writeAndFlag: flag at unaligned offset " + flagOffset + " of " + dst);
        }
        RdmaLocalRegion source = local(src, "writeAndFlag", srcOffset, length);
        checkRemote(dst, "writeAndFlag", dstOffset, length, true);
        dst.checkRange("writeAndFlag flag", flagOffset, Long.BYTES);
        long flagTicket;
        qpLock.lock();
        try {
            checkAlive();
            flagTicket = reserve(2);
            long scratch = scratchOffset(flagTicket, sqDepth);
            data.set(LONG_LAYOUT, scratch, flagValue); // plain: the post below is a native call the device reads after
            postPair(flagTicket, source.address() + srcOffset, (int) length, source.lkey(), dst.address() + dstOffset,
                    data.address() + scratch, Long.BYTES, dataMr.getLkey(), dst.address() + flagOffset, dst.key(),
                    "RDMA_WRITE pair (writeAndFlag)");
        } finally {
            qpLock.unlock();
        }
        return synchronousIfLoopback(flagTicket, "RDMA_WRITE pair (writeAndFlag)");
    }

    @Override
    public long writePublished(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length) {
        Link.checkPublishable(dst, dstOffset, length);
        RdmaLocalRegion source = local(src, "writePublished", srcOffset, length);
        checkRemote(dst, "writePublished", dstOffset, length, true);
        if (length == 1) {
            return write(src, srcOffset, dst, dstOffset, length);
        }
        long flagTicket;
        qpLock.lock();
        try {
            checkAlive();
            flagTicket = reserve(2);
            // The rest, then the first byte as its own 1-byte WRITE: a later WR of the QP, so placed after the rest,
            // and a single byte, which no responder can tear (rxe copies wider WRITEs byte by byte).
            postPair(flagTicket, source.address() + srcOffset + 1, (int) length - 1, source.lkey(),
                    dst.address() + dstOffset + 1, source.address() + srcOffset, 1, source.lkey(),
                    dst.address() + dstOffset, dst.key(), "RDMA_WRITE pair (writePublished)");
        } finally {
            qpLock.unlock();
        }
        return synchronousIfLoopback(flagTicket, "RDMA_WRITE pair (writePublished)");
    }

    @Override
    public long writeFirstByteAs(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length,
                                 byte first) {
        Link.checkFirstByteAs(dst, dstOffset, length);
        RdmaLocalRegion source = local(src, "writeFirstByteAs", srcOffset, length);
        checkRemote(dst, "writeFirstByteAs", dstOffset, length, true);
        long ticket;
        qpLock.lock();
        try {
            checkAlive();
            ticket = reserve();
            long scratch = scratchOffset(ticket, sqDepth);
            data.set(ValueLayout.JAVA_BYTE, scratch, first); // plain: the post below reads it after
            setSge(gatherWr.getSgeMod(0), data.address() + scratch, 1, dataMr.getLkey());
            setSge(gatherWr.getSgeMod(1), source.address() + srcOffset + 1, (int) length - 1, source.lkey());
            post(gatherCall, gatherWr, ticket, loopback, dst.address() + dstOffset, dst.key(),
                    "RDMA_WRITE (writeFirstByteAs)");
        } finally {
            qpLock.unlock();
        }
        return synchronousIfLoopback(ticket, "RDMA_WRITE (writeFirstByteAs)");
    }

    private static void setSge(SVCPostSend.SgeMod sge, long address, int length, int lkey) {
        sge.setAddr(address);
        sge.setLength(length);
        sge.setLkey(lkey);
    }

    @Override
    public long writePublishedInline(MemorySegment src, long srcOffset, RemoteRegion dst, long dstOffset, int length) {
        Link.checkInline(dst, dstOffset, length);
        checkRemote(dst, "writePublishedInline", dstOffset, length, true);
        long ticket;
        qpLock.lock();
        try {
            checkAlive();
            ticket = reserve(length == 1 ? 1 : 2);
            long scratch = scratchOffset(ticket, sqDepth);
            // Plain copy: the post below is a native call that the HCA (or rxe) reads the scratch bytes after.
            MemorySegment.copy(src, srcOffset, data, scratch, length);
            long from = data.address() + scratch;
            if (length == 1) {
                postSend(writeCall, writeWr, ticket, loopback, from, 1, dataMr.getLkey(), dst.address() + dstOffset,
                        dst.key(), "RDMA_WRITE (writePublishedInline)");
            } else {
                // As writePublished: the rest, then the first byte as its own later 1-byte WRITE.
                postPair(ticket, from + 1, length - 1, dataMr.getLkey(), dst.address() + dstOffset + 1, from, 1,
                        dataMr.getLkey(), dst.address() + dstOffset, dst.key(), "RDMA_WRITE pair (writePublishedInline)");
            }
        } finally {
            qpLock.unlock();
        }
        return synchronousIfLoopback(ticket, "RDMA_WRITE (writePublishedInline)");
    }

    @Override
    public long read(RemoteRegion src, long srcOffset, LocalRegion dst, long dstOffset, long length) {
        checkRemote(src, "read", srcOffset, length, false);
        RdmaLocalRegion target = local(dst, "read", dstOffset, length);
        long ticket;
        qpLock.lock();
        try {
            checkAlive();
            ticket = reserve();
            postSend(readCall, readWr, ticket, loopback, target.address() + dstOffset, (int) length, target.lkey(),
                    src.address() + srcOffset, src.key(), "RDMA_READ");
        } finally {
            qpLock.unlock();
        }
        return synchronousIfLoopback(ticket, "RDMA_READ");
    }

    /** A loopback link's reader is this process, possibly looking right after the call: complete before returning. */
    private long synchronousIfLoopback(long ticket, String operation) {
        if (loopback) {
            awaitTicket(ticket, operation);
        }
        return ticket;
    }

    // ---------------------------------------------------------------- two-sided messages

    @Override
    public boolean send(int type, MemorySegment payload, long offset, int length) {
        if (type <= 0) {
            throw new IllegalArgumentException("message type must be > 0, got " + type);
        }
        int max = slotSize - SLOT_PAYLOAD_OFFSET;
        if (length < 0 || length > max) {
            throw new IllegalArgumentException("message of " + length + " bytes exceeds the limit of " + max
                    + " bytes (rdma.maxMessageSize)");
        }
        long ticket;
        qpLock.lock();
        try {
            checkAlive();
            if (messagesSent >= peerRecvDepth + peerConsumed && !refreshCredits()) {
                return false;
            }
            ticket = reserve();
            long slot = sendSlotOffset(ticket, sqDepth, recvDepth, slotSize);
            data.set(INT_LAYOUT, slot + SLOT_TYPE_OFFSET, type);
            MemorySegment.copy(payload, offset, data, slot + SLOT_PAYLOAD_OFFSET, length);
            postSend(sendCall, sendWr, ticket, true, data.address() + slot, SLOT_PAYLOAD_OFFSET + length,
                    dataMr.getLkey(), 0, 0, "SEND");
            messagesSent++;
        } finally {
            qpLock.unlock();
        }
        awaitTicket(ticket, "SEND");
        return true;
    }

    /** Holding qpLock: RDMA-READs the peer's consumed count; true if the peer now has a free receive buffer. */
    private boolean refreshCredits() {
        long ticket = postFlush();
        awaitTicket(ticket, "RDMA_READ (credits)");
        peerConsumed = Math.max(peerConsumed, snapshot(control));
        return messagesSent < peerRecvDepth + peerConsumed;
    }

    /** Holding qpLock: a signaled 8-byte READ of the peer's consumed word; completes every earlier request. */
    private long postFlush() {
        long ticket = reserve();
        postSend(readCall, readWr, ticket, true, control.address() + SNAPSHOT_OFFSET, Long.BYTES, controlMr.getLkey(),
                peerControlAddress + CONSUMED_OFFSET, peerControlKey, "RDMA_READ (flush)");
        return ticket;
    }

    /**
     * Delivers up to {@code limit} received messages to {@code handler} and reposts their buffers. Called by the
     * transport's single {@code pollMessages} thread.
     */
    int deliver(MessageHandler handler, int limit) {
        reap();
        if (!helloDone || failure != null) {
            return 0;
        }
        Link from = transport.linkFor(peerId, this);
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
        // cqLock: close() must not destroy the QP (and free this prepared call) under a post in progress
        cqLock.lock();
        try {
            if (failure != null || resourcesClosed) {
                return;
            }
            receiveCalls[slot].execute();
        } catch (IOException e) {
            fail("reposting receive slot " + slot + " failed: " + e.getMessage());
            return;
        } finally {
            cqLock.unlock();
        }
        consumed++;
        publishConsumed(control, consumed); // release: the receive is posted before the peer can count on it
    }

    // ---------------------------------------------------------------- tickets

    @Override
    public boolean isComplete(long ticket) {
        if (ticket <= completed) {
            return true;
        }
        reap();
        if (ticket <= completed) {
            return true;
        }
        requestFlush(ticket, false);
        return false;
    }

    @Override
    public boolean isBacklogged(long ticket) {
        if (ticket - completed <= backlogThreshold) {
            return false;
        }
        reap(); // tryLock: another thread reaping is just as good
        return ticket - completed > backlogThreshold;
    }

    @Override
    public void awaitCompletion(long ticket) {
        if (ticket <= completed) {
            checkAlive();
            return;
        }
        requestFlush(ticket, true);
        awaitTicket(ticket, "ticket " + ticket);
    }

    /** Makes sure a signaled request at or after {@code ticket} is outstanding. */
    private void requestFlush(long ticket, boolean wait) {
        if (wait) {
            qpLock.lock();
        } else if (!qpLock.tryLock()) {
            return;
        }
        try {
            if (ticket > posted) {
                throw new IllegalArgumentException("ticket " + ticket + " was never issued on " + this
                        + " (last issued " + posted + ")");
            }
            if (lastSignaled < ticket && ticket > completed && failure == null) {
                postFlush();
            }
        } finally {
            qpLock.unlock();
        }
    }

    /** Reaps until {@code ticket} completed; bounded by liveness and {@code rdma.operationTimeoutMillis}. */
    private void awaitTicket(long ticket, String operation) {
        if (ticket <= completed) {
            return;
        }
        long deadline = System.nanoTime() + timeoutNanos;
        while (ticket > completed) {
            reap();
            checkAlive();
            if (System.nanoTime() - deadline > 0 && ticket > completed) {
                fail(operation + " did not complete within " + timeoutNanos / 1_000_000
                        + " ms (rdma.operationTimeoutMillis; completed up to " + completed + ")");
                checkAlive();
            }
            idle.idle();
        }
    }

    /** Holding qpLock: the next WR number, once the send queue has room for it. */
    private long reserve() {
        return reserve(1);
    }

    /** Holding qpLock: the last of the next {@code count} WR numbers, once the send queue has room for all. */
    private long reserve(int count) {
        long ticket = posted + count;
        if (ticket - completed > sqDepth) {
            long deadline = System.nanoTime() + timeoutNanos;
            while (ticket - completed > sqDepth) {
                reap();
                checkAlive();
                if (System.nanoTime() - deadline > 0 && ticket - completed > sqDepth) {
                    fail("send queue stayed full (" + sqDepth + " requests) for " + timeoutNanos / 1_000_000 + " ms");
                    checkAlive();
                }
                idle.idle();
            }
        }
        return ticket;
    }

    /** Holding qpLock, after {@link #reserve}. */
    private void postSend(SVCPostSend call, SVCPostSend.SendWRMod wr, long ticket, boolean forceSignal, long localAddress,
                          int length, int lkey, long remoteAddress, int rkey, String operation) {
        setSge(wr.getSgeMod(0), localAddress, length, lkey);
        post(call, wr, ticket, forceSignal, remoteAddress, rkey, operation);
    }

    /** Holding qpLock, after {@link #reserve} and with {@code wr}'s gather entries set: numbers, signals, posts. */
    private void post(SVCPostSend call, SVCPostSend.SendWRMod wr, long ticket, boolean forceSignal, long remoteAddress,
                      int rkey, String operation) {
        boolean signal = forceSignal || ticket - lastSignaled >= signalInterval;
        wr.setWr_id(ticket);
        wr.setSend_flags(signal ? IbvSendWR.IBV_SEND_SIGNALED : 0);
        SVCPostSend.RdmaMod rdma = wr.getRdmaMod();
        rdma.setRemote_addr(remoteAddress);
        rdma.setRkey(rkey);
        try {
            call.execute();
        } catch (IOException e) {
            fail(operation + " could not be posted: " + e.getMessage());
            checkAlive();
        }
        posted = ticket;
        if (signal) {
            lastSignaled = ticket;
            signaledCount++;
        }
    }

    // ---------------------------------------------------------------- heartbeat

    // Owned by the transport's heartbeat thread.
    private long beatPosted = -1;
    private long beatCompleted = -1;
    private long beatProgressAt;
    private volatile long probes; // volatile only so that tests can watch it

    /**
     * Called by the transport's heartbeat thread every {@code rdma.heartbeatMillis}: probes an idle link, makes an
     * unsignaled tail signaled so that its completion (or error) shows up, and fails the link when outstanding
     * requests made no progress for {@code rdma.operationTimeoutMillis}. Never waits for the QP lock.
     */
    void heartbeat(long nowNanos) {
        if (!helloDone || failure != null || loopback) {
            return;
        }
        reap();
        long done = completed;
        if (done != beatCompleted) {
            beatCompleted = done;
            beatProgressAt = nowNanos;
        }
        if (!qpLock.tryLock()) {
            return; // a poster is active right now: the link is not idle
        }
        try {
            if (failure != null || resourcesClosed) {
                return;
            }
            if (posted > done) {
                if (lastSignaled < posted) {
                    postFlush(); // the tail is unsignaled: nothing would ever report its completion or error
                } else if (nowNanos - beatProgressAt > timeoutNanos) {
                    fail("requests up to " + posted + " made no progress for " + timeoutNanos / 1_000_000
                            + " ms (rdma.operationTimeoutMillis; completed up to " + done + ")");
                }
            } else if (posted == beatPosted) {
                postFlush(); // idle since the last beat: a vanished peer shows up as an error completion
                probes++;
            }
            beatPosted = posted;
        } finally {
            qpLock.unlock();
        }
    }

    @Override
    public io.fabricrpc.transport.LinkStatistics statistics() {
        return this;
    }

    /** Work requests posted: the WR number of the latest, by an opaque load (posters write it under qpLock). */
    @Override
    public long loWritesPosted() {
        return (long) POSTED.getOpaque(this);
    }

    @Override
    public long loSignaledCompletions() {
        return (long) SIGNALED_COMPLETIONS.getOpaque(this);
    }

    @Override
    public long loCompletionErrors() {
        return (long) COMPLETION_ERRORS.getOpaque(this);
    }

    /** Signaled requests posted so far (tests check that signaling stays selective). */
    long signaledCount() {
        qpLock.lock();
        try {
            return signaledCount;
        } finally {
            qpLock.unlock();
        }
    }

    /** Work requests posted so far. */
    long postedCount() {
        qpLock.lock();
        try {
            return posted;
        } finally {
            qpLock.unlock();
        }
    }

    /** Heartbeat probes posted on this idle link so far (read by tests; a plain read of the heartbeat's counter). */
    long probes() {
        return probes;
    }

    /**
     * Holding qpLock, after {@code reserve(2)}: posts two chained RDMA WRITEs to the same remote key in one call,
     * numbered {@code secondTicket - 1} and {@code secondTicket}; only the second may be signaled.
     */
    private void postPair(long secondTicket, long firstLocal, int firstLength, int firstLkey, long firstRemote,
                          long secondLocal, int secondLength, int secondLkey, long secondRemote, int rkey,
                          String operation) {
        boolean signal = loopback || secondTicket - lastSignaled >= signalInterval;
        pairFirstWr.setWr_id(secondTicket - 1);
        pairFirstWr.setSend_flags(0);
        SVCPostSend.SgeMod sge = pairFirstWr.getSgeMod(0);
        sge.setAddr(firstLocal);
        sge.setLength(firstLength);
        sge.setLkey(firstLkey);
        pairFirstWr.getRdmaMod().setRemote_addr(firstRemote);
        pairFirstWr.getRdmaMod().setRkey(rkey);
        pairSecondWr.setWr_id(secondTicket);
        pairSecondWr.setSend_flags(signal ? IbvSendWR.IBV_SEND_SIGNALED : 0);
        sge = pairSecondWr.getSgeMod(0);
        sge.setAddr(secondLocal);
        sge.setLength(secondLength);
        sge.setLkey(secondLkey);
        pairSecondWr.getRdmaMod().setRemote_addr(secondRemote);
        pairSecondWr.getRdmaMod().setRkey(rkey);
        try {
            pairCall.execute();
        } catch (IOException e) {
            fail(operation + " could not be posted: " + e.getMessage());
            checkAlive();
        }
        posted = secondTicket;
        if (signal) {
            lastSignaled = secondTicket;
            signaledCount++;
        }
    }

    /** Reaps the CQ if no other thread is doing so. */
    private void reap() {
        if (!qpReady || !cqLock.tryLock()) {
            return; // not connected yet (an accepted QP still being set up), or another thread reaps
        }
        try {
            if (resourcesClosed) {
                return;
            }
            int n;
            while ((n = pollCall.execute().getPolls()) > 0) {
                for (int i = 0; i < n; i++) {
                    onCompletion(completions[i]);
                }
            }
        } catch (IOException e) {
            fail("polling the completion queue failed: " + e.getMessage());
        } finally {
            cqLock.unlock();
        }
    }

    private void onCompletion(IbvWC wc) {
        long wrId = wc.getWr_id();
        int status = wc.getStatus();
        boolean receive = (wrId & RECEIVE_TAG) != 0;
        if (status != 0) {
            completionErrors++;
            fail(new WorkCompletionException(receive ? "RECV" : "send queue request", wrId & ~RECEIVE_TAG, status)
                    .getMessage());
            return;
        }
        if (!receive) {
            signaledCompletions++; // one per signaled request (selective signaling), not per call
            if (wrId > completed) {
                completed = wrId; // volatile: waiters see the completion, and a READ's data, after this
            }
            return;
        }
        int slot = (int) (wrId & 0xFFFF);
        if (!helloDone) {
            onHello(slot, wc.getByte_len());
            return;
        }
        long next = receivesCompleted;
        if (slot != (int) (next % recvDepth)) {
            fail("receive completed out of ring order: slot " + slot + ", expected " + next % recvDepth);
            return;
        }
        receiveLengths[slot] = wc.getByte_len();
        receivesCompleted = next + 1; // volatile: publishes the length and the received bytes to the deliverer
    }

    // ---------------------------------------------------------------- checks and liveness

    private RdmaLocalRegion local(LocalRegion region, String operation, long offset, long length) {
        if (!(region instanceof RdmaLocalRegion r) || r.transport() != transport) {
            throw new TransportException(operation + ": local region " + region
                    + " was not allocated by this rdma endpoint (" + Long.toHexString(transport.endpointId()) + ")");
        }
        if (offset < 0 || length < 0 || offset > r.length() - length) {
            throw new TransportException(operation + " out of range: offset " + offset + " + " + length
                    + " bytes exceeds local region " + r.remote().regionId() + " (length " + r.length() + ")");
        }
        if (length > Integer.MAX_VALUE) {
            throw new TransportException(operation + " of " + length + " bytes exceeds one work request (2^31 - 1)");
        }
        return r;
    }

    private void checkRemote(RemoteRegion region, String operation, long offset, long length, boolean writing) {
        checkAlive();
        if (region.ownerId() != peerId) {
            throw new TransportException(operation + " to " + region + " on the link to " + Long.toHexString(peerId)
                    + ": the region belongs to another endpoint");
        }
        if (writing ? !region.access().allowsWrite() : !region.access().allowsRead()) {
            throw new TransportException(operation + " denied: " + region + " grants peers " + region.access());
        }
        region.checkRange(operation, offset, length);
    }

    @Override
    public void checkAlive() {
        String reason = failure;
        if (reason != null) {
            throw new PeerFailedException(peerName(), reason);
        }
    }

    @Override
    public boolean isAlive() {
        return failure == null;
    }

    /** Records the first reason the link failed (a CAS: several threads may fail it); later operations throw it. */
    void fail(String reason) {
        FAILURE.compareAndSet(this, null, reason);
    }

    @Override
    public void fence(String reason) {
        fail("fenced: " + reason);
    }

    String peerName() {
        return "rdma endpoint " + Long.toHexString(peerId);
    }

    /** Fails the link and destroys its QP and CQ; the memory goes later, see {@link #releaseMemory}. */
    void close(String reason) {
        fail(reason);
        qpLock.lock();
        cqLock.lock();
        try {
            if (resourcesClosed) {
                return;
            }
            resourcesClosed = true;
            try {
                endpoint.close();
            } catch (IOException | InterruptedException | RuntimeException e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                // The QP may still be alive with receives posted into our memory: leak it rather than free it.
                fail("closing the QP failed (its memory is leaked, not freed): " + e);
                return;
            }
            qpDestroyed = true;
        } finally {
            cqLock.unlock();
            qpLock.unlock();
        }
    }

    /**
     * Frees the prepared calls, deregisters and frees the link memory. The transport calls it only after DiSNI's
     * group is closed (no CM thread, no QP left), so that nothing can still reach this memory.
     */
    void releaseMemory() {
        qpLock.lock();
        cqLock.lock();
        try {
            if (qpDestroyed && !memoryReleased) {
                memoryReleased = true;
                freeQuietly();
            }
        } finally {
            cqLock.unlock();
            qpLock.unlock();
        }
    }

    private void freeQuietly() {
        try {
            // the QP is destroyed: nothing executes these prepared calls any more
            for (SVCPostSend call : new SVCPostSend[] {writeCall, readCall, sendCall, pairCall, gatherCall}) {
                if (call != null) {
                    call.free();
                }
            }
            if (receiveCalls != null) {
                for (SVCPostRecv call : receiveCalls) {
                    if (call != null) {
                        call.free();
                    }
                }
            }
            if (pollCall != null) {
                pollCall.free();
            }
            transport.deregister(controlMr);
            transport.deregister(dataMr);
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
