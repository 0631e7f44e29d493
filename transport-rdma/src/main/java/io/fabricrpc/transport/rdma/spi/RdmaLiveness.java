package io.fabricrpc.transport.rdma.spi;

import io.fabricrpc.api.PeerFailedException;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Whether a link still works: the first reason it failed, the heartbeat that finds a silent peer, and the order of
 * teardown (fail, destroy the QP, later free the memory).
 *
 * <p>Invariant: {@code failure} is set once (CAS) and never cleared, and every operation checks it before it posts,
 * so a failed link posts nothing new; memory is freed only after its QP was destroyed. Owners: {@code failure} any
 * thread; the beat fields the transport's heartbeat thread alone, which takes {@code qpLock} only by {@code tryLock}
 * (a poster holding it means the link is busy); the teardown flags whoever holds both of the send queue's locks.
 */
final class RdmaLiveness {
    private static final VarHandle FAILURE;

    static {
        try {
            FAILURE = MethodHandles.lookup().findVarHandle(RdmaLiveness.class, "failure", String.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final RdmaLink link; // names the peer in the exceptions
    private final long timeoutNanos;

    // ---- any thread: the first reason the link failed
    private volatile String failure;

    // ---- the heartbeat thread (probes: volatile only so that tests can watch it)
    private long beatPosted = -1;
    private long beatCompleted = -1;
    private long beatProgressAt;
    private volatile long probes;

    // ---- teardown, holding qpLock and cqLock
    private boolean qpDestroyed;
    private boolean memoryReleased;

    RdmaLiveness(RdmaLink link, long timeoutNanos) {
        this.link = link;
        this.timeoutNanos = timeoutNanos;
    }

    void checkAlive() {
        String reason = failure;
        if (reason != null) {
            throw new PeerFailedException(link.peerName(), reason);
        }
    }

    boolean isAlive() {
        return failure == null;
    }

    /** Records the first reason the link failed (a CAS: several threads may fail it); later operations throw it. */
    void fail(String reason) {
        FAILURE.compareAndSet(this, null, reason);
    }

    /** Heartbeat probes posted on the idle link so far. */
    long lvProbes() {
        return probes;
    }

    /**
     * The heartbeat thread, every {@code rdma.heartbeatMillis} on a ready, live, non-loopback link: probes an idle
     * link, makes an unsignaled tail signaled so that its completion (or error) shows up, and fails the link when
     * outstanding requests made no progress for {@code rdma.operationTimeoutMillis}. Never waits for qpLock.
     */
    void heartbeat(long nowNanos, RdmaSendQueue queue) {
        queue.reap();
        long done = queue.lvCompleted();
        if (done != beatCompleted) {
            beatCompleted = done;
            beatProgressAt = nowNanos;
        }
        if (!queue.tryLockQp()) {
            return; // a poster is active right now: the link is not idle
        }
        try {
            if (failure != null || queue.isClosed()) {
                return;
            }
            long posted = queue.posted();
            if (posted > done) {
                if (!queue.isTailSignaled()) {
                    queue.flush(); // the tail is unsignaled: nothing would ever report its completion or error
                } else if (nowNanos - beatProgressAt > timeoutNanos) {
                    fail("requests up to " + posted + " made no progress for " + timeoutNanos / 1_000_000
                            + " ms (rdma.operationTimeoutMillis; completed up to " + done + ")");
                }
            } else if (posted == beatPosted) {
                queue.flush(); // idle since the last beat: a vanished peer shows up as an error completion
                probes++;
            }
            beatPosted = queue.posted(); // after a flush: that flush is not traffic
        } finally {
            queue.unlockQp();
        }
    }

    /** Fails the link, then destroys its QP and CQ once no post, reap or repost is under way. */
    void close(String reason, RdmaSendQueue queue, QpEndpoint endpoint) {
        fail(reason);
        queue.lockAll();
        try {
            if (!queue.markClosed()) {
                return;
            }
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
            queue.unlockAll();
        }
    }

    /** Runs {@code free} once, holding both locks, and only if the QP was destroyed (else the memory leaks). */
    void releaseMemory(RdmaSendQueue queue, Runnable free) {
        queue.lockAll();
        try {
            if (qpDestroyed && !memoryReleased) {
                memoryReleased = true;
                free.run();
            }
        } finally {
            queue.unlockAll();
        }
    }
}
