package io.fabricrpc.transport.rdma.spi;

import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import io.fabricrpc.transport.LinkStatistics;
import io.fabricrpc.transport.rdma.verbs.WorkCompletionException;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.ReentrantLock;

import static io.fabricrpc.transport.rdma.spi.LinkMemoryDescriptor.SNAPSHOT_OFFSET;

/**
 * The send queue and completion queue of one link's RC QP: WR numbers, selective signaling, tickets, flushes, reaping.
 *
 * <p>Invariant (the flush number): {@code completed} only grows and every request numbered {@code <= completed} has
 * completed; {@code posted - completed <= sqDepth} and {@code posted - lastSignaled < signalInterval < sqDepth}, so a
 * full window always holds a signaled request. Threads: posters number and post under {@code qpLock}, held for one
 * post; any thread reaps under {@code cqLock.tryLock}, never while waiting for {@code qpLock}, and reads
 * {@code completed} with one volatile load. Teardown holds both locks. Why: the package doc.
 */
final class RdmaSendQueue implements LinkStatistics {
    /** Marks the WR ids of receives, so that the reaper tells them from send-queue requests. */
    static final long RECEIVE_TAG = 1L << 62;
    private static final int POLL_BATCH = 16;
    private static final VarHandle POSTED;
    private static final VarHandle SIGNALED_COMPLETIONS;
    private static final VarHandle COMPLETION_ERRORS;
    private static final VarHandle CQ_POLLS;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            POSTED = lookup.findVarHandle(RdmaSendQueue.class, "posted", long.class);
            SIGNALED_COMPLETIONS = lookup.findVarHandle(RdmaSendQueue.class, "signaledCompletions", long.class);
            COMPLETION_ERRORS = lookup.findVarHandle(RdmaSendQueue.class, "completionErrors", long.class);
            CQ_POLLS = lookup.findVarHandle(RdmaSendQueue.class, "cqPolls", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final RdmaLink link; // takes completed receives; named in messages
    private final RdmaLiveness liveness;
    private final int sqDepth;
    private final int signalInterval;
    /** More outstanding than this is a backlog: half the queue, never below the unsignaled tail of an idle link. */
    private final int backlogThreshold;
    private final long timeoutNanos;
    private final IdleStrategy idle = YieldingIdleStrategy.INSTANCE;
    private final MemorySegment control; // its snapshot word is the target of the flush READ
    private final IbvMr controlMr;
    private final ReentrantLock qpLock = new ReentrantLock();
    private final ReentrantLock cqLock = new ReentrantLock();

    // ---- the thread that sets the QP up: prepared calls, published by the volatile ready
    private volatile boolean ready;
    private SVCPostSend flushCall;
    private SVCPostSend.SendWRMod flushWr;
    private SVCPollCq pollCall;
    private IbvWC[] completions;

    // ---- posters, under qpLock (posted also read opaque by the counters file)
    private long posted;
    private long lastSignaled;
    private long signaledCount;

    // ---- the reaper, under cqLock (completed: volatile, read by any thread; the counts: read opaque)
    private volatile long completed;
    private long signaledCompletions;
    private long completionErrors;
    private long cqPolls; // ibv_poll_cq calls, the last of each reap finding nothing

    // ---- teardown: written holding qpLock and cqLock, so read under either
    private boolean closed;

    RdmaSendQueue(RdmaLink link, RdmaLiveness liveness, int sqDepth, int signalInterval, long timeoutNanos,
                  MemorySegment control, IbvMr controlMr) {
        this.link = link;
        this.liveness = liveness;
        this.sqDepth = sqDepth;
        this.signalInterval = signalInterval;
        this.backlogThreshold = Math.max(sqDepth / 2, signalInterval);
        this.timeoutNanos = timeoutNanos;
        this.control = control;
        this.controlMr = controlMr;
    }

    /** Once the QP exists, after the other parts prepared theirs: the flush READ and the CQ poll. */
    void prepare(QpEndpoint endpoint) throws IOException {
        flushCall = endpoint.prepareSend(IbvSendWR.IBV_WR_RDMA_READ, 1, 1, controlMr.getLkey());
        flushWr = flushCall.getWrMod(0);
        completions = new IbvWC[POLL_BATCH];
        for (int i = 0; i < POLL_BATCH; i++) {
            completions[i] = new IbvWC();
        }
        pollCall = endpoint.getCqProvider().getCQ().poll(completions, POLL_BATCH);
        ready = true; // volatile: publishes the prepared calls to the threads that reap and post
    }

    void lockQp() {
        qpLock.lock();
    }

    boolean tryLockQp() {
        return qpLock.tryLock();
    }

    void unlockQp() {
        qpLock.unlock();
    }

    /** Reaper, on the peer's HELLO: the flush READs the peer's consumed word into our snapshot word. */
    void aimFlush(long peerConsumedAddress, int peerControlKey) {
        QpEndpoint.aim(flushWr, control.address() + SNAPSHOT_OFFSET, Long.BYTES, controlMr.getLkey(),
                peerConsumedAddress, peerControlKey); // published with the link by the handshake's volatile write
    }

    // ---------------------------------------------------------------- posting, holding qpLock

    /** Holding qpLock: the last of the next {@code count} WR numbers, once the send queue has room for all. */
    long reserve(int count) {
        long ticket = posted + count;
        if (ticket - completed > sqDepth) {
            reapUntil(ticket, sqDepth, null); // null: waiting for room, not for a ticket
        }
        return ticket;
    }

    /** Holding qpLock, after {@link #reserve} and with {@code wr} aimed: numbers, signals, posts. */
    void post(SVCPostSend call, SVCPostSend.SendWRMod wr, long ticket, boolean forceSignal, String operation) {
        boolean signal = forceSignal || ticket - lastSignaled >= signalInterval;
        wr.setWr_id(ticket);
        wr.setSend_flags(signal ? IbvSendWR.IBV_SEND_SIGNALED : 0);
        execute(call, operation);
        record(ticket, signal);
    }

    /** Holding qpLock, after {@code reserve(2)}: two chained WRs in one call; only the second may be signaled. */
    void postPair(SVCPostSend call, SVCPostSend.SendWRMod first, SVCPostSend.SendWRMod second, long secondTicket,
                  boolean forceSignal, String operation) {
        boolean signal = forceSignal || secondTicket - lastSignaled >= signalInterval;
        first.setWr_id(secondTicket - 1);
        first.setSend_flags(0);
        second.setWr_id(secondTicket);
        second.setSend_flags(signal ? IbvSendWR.IBV_SEND_SIGNALED : 0);
        execute(call, operation);
        record(secondTicket, signal);
    }

    private void execute(SVCPostSend call, String operation) {
        try {
            call.execute();
        } catch (IOException e) {
            liveness.fail(operation + " could not be posted: " + e.getMessage());
            liveness.checkAlive();
        }
    }

    private void record(long ticket, boolean signal) {
        posted = ticket;
        if (signal) {
            lastSignaled = ticket;
            signaledCount++;
        }
    }

    /** Holding qpLock: a signaled 8-byte READ of the peer's consumed word; completes every earlier request. */
    long flush() {
        long ticket = reserve(1);
        post(flushCall, flushWr, ticket, true, "RDMA_READ (flush)");
        return ticket;
    }

    /** Holding qpLock: the WR number of the latest request. */
    long posted() {
        return posted;
    }

    /** Holding qpLock: whether the latest request is signaled, so that its completion (or error) will show up. */
    boolean isTailSignaled() {
        return lastSignaled >= posted;
    }

    /** Holding qpLock or cqLock: whether teardown began (no post, reap or repost may touch the QP any more). */
    boolean isClosed() {
        return closed;
    }

    // ---------------------------------------------------------------- tickets

    long lvCompleted() {
        return completed;
    }

    boolean isComplete(long ticket) {
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

    boolean isBacklogged(long ticket) {
        if (ticket - completed <= backlogThreshold) {
            return false;
        }
        reap(); // tryLock: another thread reaping is just as good
        return ticket - completed > backlogThreshold;
    }

    void awaitCompletion(long ticket) {
        if (ticket <= completed) {
            liveness.checkAlive();
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
                throw new IllegalArgumentException("ticket " + ticket + " was never issued on " + link
                        + " (last issued " + posted + ")");
            }
            if (lastSignaled < ticket && ticket > completed && liveness.isAlive()) {
                flush();
            }
        } finally {
            qpLock.unlock();
        }
    }

    /** Reaps until {@code ticket} completed; bounded by liveness and {@code rdma.operationTimeoutMillis}. */
    void awaitTicket(long ticket, String operation) {
        if (ticket > completed) {
            reapUntil(ticket, 0, operation);
        }
    }

    /** Reaps until {@code ticket - completed <= slack}: a ticket's completion (0) or room in the queue (sqDepth). */
    private void reapUntil(long ticket, int slack, String operation) {
        long deadline = System.nanoTime() + timeoutNanos;
        while (ticket - completed > slack) {
            reap();
            liveness.checkAlive();
            if (System.nanoTime() - deadline > 0 && ticket - completed > slack) {
                liveness.fail(operation != null ? operation + " did not complete within " + timeoutNanos / 1_000_000
                        + " ms (rdma.operationTimeoutMillis; completed up to " + completed + ")"
                        : "send queue stayed full (" + sqDepth + " requests) for " + timeoutNanos / 1_000_000 + " ms");
                liveness.checkAlive();
            }
            idle.idle();
        }
    }

    // ---------------------------------------------------------------- reaping

    /** Reaps the CQ if no other thread is doing so. */
    void reap() {
        if (!ready || !cqLock.tryLock()) {
            return; // not connected yet (an accepted QP still being set up), or another thread reaps
        }
        try {
            if (closed) {
                return;
            }
            int n;
            long polls = cqPolls;
            while ((n = pollCall.execute().getPolls()) > 0) {
                CQ_POLLS.setOpaque(this, ++polls);
                for (int i = 0; i < n; i++) {
                    onCompletion(completions[i]);
                }
            }
            CQ_POLLS.setOpaque(this, polls + 1); // the empty poll that ended the loop
        } catch (IOException e) {
            liveness.fail("polling the completion queue failed: " + e.getMessage());
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
            liveness.fail(new WorkCompletionException(receive ? "RECV" : "send queue request", wrId & ~RECEIVE_TAG,
                    status).getMessage());
        } else if (receive) {
            link.onReceive((int) (wrId & 0xFFFF), wc.getByte_len());
        } else {
            signaledCompletions++; // one per signaled request (selective signaling), not per call
            if (wrId > completed) {
                completed = wrId; // volatile: waiters see the completion, and a READ's data, after this
            }
        }
    }

    /** The delivering thread: reposts a receive unless the link failed or closed; false if it did not. */
    boolean postReceive(SVCPostRecv call) throws IOException {
        cqLock.lock(); // teardown must not destroy the QP (and free this prepared call) under a post in progress
        try {
            if (!liveness.isAlive() || closed) {
                return false;
            }
            call.execute();
            return true;
        } finally {
            cqLock.unlock();
        }
    }

    // ---------------------------------------------------------------- teardown

    /** Teardown: takes both locks, qpLock first, so that no post, reap or repost is under way. */
    void lockAll() {
        qpLock.lock();
        cqLock.lock();
    }

    void unlockAll() {
        cqLock.unlock();
        qpLock.unlock();
    }

    /** Holding both locks: marks the QP closed for posters, the reaper and the reposter; false if it already was. */
    boolean markClosed() {
        boolean first = !closed;
        closed = true;
        return first;
    }

    /** After the QP was destroyed: frees the prepared calls. */
    void free() {
        if (flushCall != null) {
            flushCall.free();
        }
        if (pollCall != null) {
            pollCall.free();
        }
    }

    // ---------------------------------------------------------------- counts

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

    @Override
    public long loCompletionQueuePolls() {
        return (long) CQ_POLLS.getOpaque(this);
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
}
