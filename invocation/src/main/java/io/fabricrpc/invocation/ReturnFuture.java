package io.fabricrpc.invocation;

import io.fabricrpc.api.DeadlineExceededException;
import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.mailbox.MailboxClient;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The future of one {@code callReturnAsync}, whose call waits for its reply on port {@link #port} of
 * {@link #client}. Invariant: it completes once, by whichever thread claims it first ({@code claimed} 0 to 1 by
 * CAS): the collector of the reply, a waiter or the agent's sweep that finds it past its deadline, the
 * peer-failure listener, or {@link #cancel} (or a waiter, after the timeout, if a claimant never completes it). A
 * future ended without its reply leaves its port reserved under it, so the late reply is collected and dropped, never
 * read by a later call (model/mailbox_ports.pml, CANCEL). Waiting on it, or on any stage depending on it
 * ({@link #newIncompleteFuture}), collects the reply; the agent's sweep does when nobody waits.
 */
final class ReturnFuture extends CompletableFuture<Object> implements ReturnCalls.ReplyToken {
    private static final VarHandle CLAIMED;

    static {
        try {
            CLAIMED = MethodHandles.lookup().findVarHandle(ReturnFuture.class, "claimed", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final FabricRuntime runtime;
    private final MailboxClient client;
    private final int port;
    final ThreadId dest;
    /** Addressed to the worker that made the call. */
    private final boolean self;
    /** {@link System#nanoTime()} at which the call is overdue, and the timeout it came from (for messages). */
    private final long deadline;
    private final long timeoutNanos;
    private volatile int claimed;
    /** Set by the collector of this call's reply, even after the call ended without it. */
    private volatile boolean replied;

    ReturnFuture(FabricRuntime runtime, MailboxClient client, int port, ThreadId dest, boolean self, long started,
                 long timeoutNanos) {
        this.runtime = runtime;
        this.client = client;
        this.port = port;
        this.dest = dest;
        this.self = self;
        this.timeoutNanos = timeoutNanos;
        this.deadline = started + timeoutNanos;
    }

    private boolean claim() {
        return CLAIMED.compareAndSet(this, 0, 1); // volatile: one thread completes, the others see it settled
    }

    void succeed(Object value) {
        if (claim()) {
            runtime.returnCalls().pending().settle(this, value, null);
        }
    }

    void fail(Throwable failure) {
        if (claim()) {
            runtime.returnCalls().pending().settle(this, null, failure);
        }
    }

    /** Completes this claimed future: on the thread ReturnCalls chose, so dependents never run on the agent. */
    void settled(Object value, Throwable failure) {
        if (failure == null) {
            complete(value);
        } else {
            completeExceptionally(failure);
        }
    }

    /**
     * Ends the call with a {@link java.util.concurrent.CancellationException} unless it already ended. The call may
     * still run at its destination (its outcome is unknown); its port is reserved until the reply arrives, then the
     * reply is dropped.
     */
    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        if (claim()) {
            super.cancel(mayInterruptIfRunning);
            runtime.sendingAgent().wake(); // the sweep drops it from the pending calls
            return true;
        }
        return isCancelled();
    }

    @Override
    public void replyArrived() {
        replied = true; // volatile: the caller's next encode reads it
    }

    @Override
    public boolean hasReply() {
        return replied;
    }

    /** True once this future's outcome is decided (it may still be completing on another thread). */
    boolean isClaimed() {
        return claimed != 0;
    }

    /** Collects the reply if it has arrived; true once this future is done (or being completed). Never waits. */
    boolean tryCollect() {
        return claimed != 0 || client.tryCollect(port, this) && claimed != 0;
    }

    /** Fails the future if its process is gone or its deadline passed; true if it did. */
    boolean failIfOverdue(long now) {
        try {
            runtime.checkAlive(dest.rank());
        } catch (PeerFailedException e) {
            fail(new PeerFailedException(e.rank(), e.reason() + " (with a call to " + dest + " in flight: it may have"
                    + " run)", e.isOrderlyDeparture(), e));
            return true;
        } catch (RuntimeException e) {
            fail(e);
            return true;
        }
        if (now - deadline > 0) {
            fail(new DeadlineExceededException("no result from " + dest + " within " + timeoutNanos / 1_000_000
                    + " ms (the call's deadline; port " + port + ")", true));
            return true;
        }
        return false;
    }

    /**
     * Waits as {@code callReturn} does: collects the reply and runs the thread's incoming calls meanwhile, so that a
     * waiting worker neither parks nor deadlocks a peer calling it. Returns when done or at {@code deadline}.
     */
    void awaitResult(boolean interruptible, long deadline) throws InterruptedException {
        if (isDone()) {
            return;
        }
        if (self && runtime.waitingInOwnCall(dest)) {
            throw new IllegalStateException("waiting, in a call run by worker " + dest + ", for a callReturnAsync"
                    + " to " + dest + " itself: it runs only after the current call returns (chain on the future)");
        }
        int polls = 0;
        while (!tryCollect()) {
            if (interruptible && Thread.interrupted()) {
                throw new InterruptedException();
            }
            runtime.help();
            if ((++polls & 255) == 0) {
                if (failIfOverdue(System.nanoTime())) {
                    break;
                }
                if (System.nanoTime() - deadline > 0) {
                    return;
                }
                Thread.yield();
            }
            Thread.onSpinWait();
        }
        // Claimed, maybe by another thread that has yet to complete it: claim and complete follow each other with
        // nothing that waits in between. Bounded anyway: a claimant that died in between (a stack overflow) fails it.
        long claimedSeen = 0;
        for (int spins = 0; !isDone(); ) {
            if (spins++ < 1_000) {
                Thread.onSpinWait();
                continue;
            }
            spins = 1_000;
            Thread.yield();
            long now = System.nanoTime();
            if (now - deadline > 0) {
                return;
            }
            claimedSeen = claimedSeen == 0 ? now : claimedSeen;
            if (now - claimedSeen > timeoutNanos) {
                completeExceptionally(new IllegalStateException("the reply of the call to " + dest + " (port " + port
                        + ") was claimed by a thread that did not complete it within " + timeoutNanos / 1_000_000
                        + " ms (the call's timeout)"));
            }
        }
    }

    void awaitUninterruptibly() {
        try {
            awaitResult(false, Long.MAX_VALUE);
        } catch (InterruptedException e) {
            throw new AssertionError("an uninterruptible wait was interrupted", e);
        }
    }

    @Override
    public Object get() throws InterruptedException, ExecutionException {
        awaitResult(true, Long.MAX_VALUE);
        return super.get();
    }

    @Override
    public Object get(long time, TimeUnit unit) throws InterruptedException, ExecutionException, TimeoutException {
        long deadline = System.nanoTime() + unit.toNanos(time);
        awaitResult(true, deadline);
        return super.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    @Override
    public Object join() {
        awaitUninterruptibly();
        return super.join();
    }

    @Override
    public <U> CompletableFuture<U> newIncompleteFuture() {
        return new Dependent<>(this);
    }

    /** A stage depending on a {@link ReturnFuture}: waiting on it collects the root's reply. */
    static final class Dependent<U> extends CompletableFuture<U> {
        private final ReturnFuture root;

        Dependent(ReturnFuture root) {
            this.root = root;
        }

        @Override
        public <V> CompletableFuture<V> newIncompleteFuture() {
            return new Dependent<>(root);
        }

        @Override
        public U get() throws InterruptedException, ExecutionException {
            root.awaitResult(true, Long.MAX_VALUE);
            return super.get();
        }

        @Override
        public U get(long time, TimeUnit unit) throws InterruptedException, ExecutionException, TimeoutException {
            long deadline = System.nanoTime() + unit.toNanos(time);
            root.awaitResult(true, deadline);
            return super.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }

        @Override
        public U join() {
            root.awaitUninterruptibly();
            return super.join();
        }
    }
}
