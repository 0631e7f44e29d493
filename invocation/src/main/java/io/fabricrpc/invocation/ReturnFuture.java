package io.fabricrpc.invocation;

import io.fabricrpc.api.ThreadId;
import io.fabricrpc.mailbox.MailboxClient;
import io.fabricrpc.api.MessagingException;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The future of one {@code callReturnAsync}, whose call waits for its reply on port {@link #port} of
 * {@link #client}. Invariant: it completes once, by whichever thread claims it first ({@code claimed} 0 to 1 by
 * CAS): the collector of the reply, a waiter that finds it overdue, or the peer-failure listener (or a waiter, after
 * callTimeout, if a claimant never completes it). Waiting on it, or on any stage depending on it
 * ({@link #newIncompleteFuture}), collects the reply: no helper thread is needed.
 */
final class ReturnFuture extends CompletableFuture<Object> {
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
    private final long started = System.nanoTime();
    private final Duration timeout;
    private volatile int claimed;

    ReturnFuture(FabricRuntime runtime, MailboxClient client, int port, ThreadId dest, boolean self, Duration timeout) {
        this.runtime = runtime;
        this.client = client;
        this.port = port;
        this.dest = dest;
        this.self = self;
        this.timeout = timeout;
    }

    private boolean claim() {
        return CLAIMED.compareAndSet(this, 0, 1); // volatile: one thread completes, the others see it settled
    }

    void succeed(Object value) {
        if (claim()) {
            complete(value);
        }
    }

    void fail(Throwable failure) {
        if (claim()) {
            completeExceptionally(failure);
        }
    }

    /** Collects the reply if it has arrived; true once this future is done (or being completed). Never waits. */
    boolean tryCollect() {
        return claimed != 0 || client.tryCollect(port, this) && claimed != 0;
    }

    /** Fails the future if its process is gone or its time is up; true if it did. */
    boolean failIfOverdue() {
        try {
            runtime.checkAlive(dest.rank());
            if (System.nanoTime() - started > timeout.toNanos()) {
                throw new MessagingException("no result from " + dest + " within " + timeout.toMillis()
                        + " ms (callTimeout)");
            }
            return false;
        } catch (RuntimeException e) {
            fail(e);
            return true;
        }
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
                if (failIfOverdue()) {
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
            if (now - claimedSeen > timeout.toNanos()) {
                completeExceptionally(new IllegalStateException("the reply of the call to " + dest + " (port " + port
                        + ") was claimed by a thread that did not complete it within " + timeout.toMillis()
                        + " ms (callTimeout)"));
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
