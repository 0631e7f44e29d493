package io.fabricrpc.invocation;

import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.messaging.SendingAgent;

import java.util.Iterator;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The {@code callReturnAsync} futures still open in this process, swept by whoever polls: a worker in
 * {@code processCalls}, a thread in {@code awaitAll}, and the agent every millisecond while any is open, so a deadline
 * holds even when no thread of the process polls. Each sweep collects arrived replies and fails overdue futures; a
 * future leaves once claimed (its one outcome decided, {@link ReturnFuture}). Futures the agent settles complete on
 * {@link #completions}, so no dependent stage (user code) runs on the agent.
 */
final class PendingReturns implements SendingAgent.Duty {
    /** How often the agent sweeps while calls are pending: the slack of a deadline nobody else watches. */
    static final long AGENT_SWEEP_NANOS = 1_000_000;

    private final SendingAgent agent;
    private final ConcurrentLinkedQueue<ReturnFuture> pending = new ConcurrentLinkedQueue<>();
    /** Racy: several sweepers may check overdue futures at once, harmlessly. */
    private volatile long lastSweepCheck;
    private final ExecutorService completions;

    PendingReturns(SendingAgent agent, int rank) {
        this.agent = agent;
        this.completions = Executors.newCachedThreadPool(
                Thread.ofPlatform().daemon().name("fabricrpc-completions-" + rank + "-", 0).factory());
    }

    /** Adds a future just sent, and wakes the agent: it sweeps the deadline if no thread of this process polls. */
    void add(ReturnFuture future) {
        pending.add(future);
        agent.wake();
    }

    /**
     * A worker's share in {@code processCalls}: collects the replies that arrived and, every millisecond, fails the
     * overdue futures. Cheap when nothing is pending.
     */
    int sweep() {
        if (pending.isEmpty()) {
            return 0;
        }
        long now = System.nanoTime();
        boolean checkOverdue = now - lastSweepCheck > AGENT_SWEEP_NANOS;
        if (checkOverdue) {
            lastSweepCheck = now;
        }
        return sweep(now, checkOverdue);
    }

    private int sweep(long now, boolean checkOverdue) {
        int collected = 0;
        for (Iterator<ReturnFuture> it = pending.iterator(); it.hasNext(); ) {
            ReturnFuture future = it.next();
            if (future.isClaimed() || future.tryCollect() || checkOverdue && future.failIfOverdue(now)) {
                it.remove();
                collected++;
            }
        }
        return collected;
    }

    /**
     * The agent's look: collects arrived replies and fails overdue calls, so a deadline holds even when no thread of
     * this process polls (a caller blocked in {@code allOf(...).join()}). Futures it settles complete on
     * {@link #completions}.
     */
    @Override
    public long doWork(long nowNanos) {
        if (pending.isEmpty()) {
            return 0;
        }
        sweep(nowNanos, true);
        return pending.isEmpty() ? 0 : AGENT_SWEEP_NANOS;
    }

    @Override
    public boolean workMayWait() {
        return !pending.isEmpty();
    }

    /** Completes a claimed future: on the completions executor when the agent settled it, else on this thread. */
    void settle(ReturnFuture future, Object value, Throwable failure) {
        if (Thread.currentThread() == agent.thread()) {
            try {
                completions.execute(() -> future.settled(value, failure));
                return;
            } catch (java.util.concurrent.RejectedExecutionException closed) {
                // closing: complete here, nobody's stage can be long-running any more
            }
        }
        future.settled(value, failure);
    }

    void peerFailed(int failedRank, PeerFailedException failure) {
        for (Iterator<ReturnFuture> it = pending.iterator(); it.hasNext(); ) {
            ReturnFuture future = it.next();
            if (future.dest.rank() == failedRank) {
                it.remove();
                future.fail(new PeerFailedException(failure.rank(), failure.reason() + " (with a call to "
                        + future.dest + " in flight: it may have run)", failure.isOrderlyDeparture(), failure));
            }
        }
    }

    /** At close: no result can arrive any more, so nothing may stay pending. */
    void failAll(int rank) {
        for (ReturnFuture future; (future = pending.poll()) != null; ) {
            future.fail(new IllegalStateException("fabric of rank " + rank + " closed before the result from "
                    + future.dest + " arrived (the call was sent: it may have run)"));
        }
        completions.shutdown();
    }
}
