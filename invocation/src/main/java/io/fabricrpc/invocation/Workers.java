package io.fabricrpc.invocation;

import io.fabricrpc.mailbox.Port;

import io.fabricrpc.api.ThreadId;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;

/**
 * Runs the attached workers' incoming calls: one-sided records, queued send-based calls and mailbox requests, in
 * {@code processCalls}, while a worker waits ({@link #help}), and on the handler threads that stand in for workers
 * no application thread attached. A worker's calls run on its own thread only.
 */
final class Workers {
    private final FabricRuntime runtime;
    private final ThreadContexts contexts;
    private final SendCalls sendCalls;
    private final ReturnCalls returns;
    private final int rank;
    private final int threads;
    private final List<Thread> handlers = new CopyOnWriteArrayList<>();
    private volatile BiConsumer<ThreadId, Throwable> errorListener = (thread, error) ->
            System.getLogger("fabricrpc").log(System.Logger.Level.ERROR, "call from " + thread + " failed: " + error, error);

    Workers(FabricRuntime runtime, ThreadContexts contexts, SendCalls sendCalls, ReturnCalls returns) {
        this.runtime = runtime;
        this.contexts = contexts;
        this.sendCalls = sendCalls;
        this.returns = returns;
        this.rank = runtime.rank();
        this.threads = runtime.threadsPerProcess();
    }

    /** Replaces the listener that failures of calls run here go to (by default, a log). */
    void onError(BiConsumer<ThreadId, Throwable> listener) {
        this.errorListener = listener;
    }

    /** A call from thread {@code sender} failed while run here. */
    void report(long sender, Throwable error) {
        errorListener.accept(ThreadId.fromLong(sender), error);
    }

    int processCalls() {
        ThreadContext context = contexts.existing();
        if (context == null || context.receiving == null) {
            throw new IllegalStateException("processCalls on thread '" + Thread.currentThread().getName()
                    + "', which is not an attached worker (call attach(index) first)");
        }
        if (context.inProcessCalls) {
            return 0; // a call that waits must not re-enter its own receiver
        }
        context.inProcessCalls = true;
        context.countPoll();
        try {
            int ran = context.receiving.processCalls(context.receiver);
            ran += sendCalls.runQueued(context);
            return ran + returns.serve(context) + returns.pending().sweep();
        } finally {
            context.inProcessCalls = false;
            // Calls sent before or by this round leave no flag waiting: one lone WRITE per round at most.
            context.publishDeferredFlags();
        }
    }

    /** Lets a waiting worker run its incoming calls (avoids deadlock between workers calling each other). */
    void help() {
        Port.advanceSuspended(); // acks reply fragments of this thread's own calls waiting below this wait
        ThreadContext context = contexts.existing();
        if (context != null) {
            context.publishDeferredFlags(); // the awaited call may be the one whose flag waits
        }
        if (context != null && context.receiving != null && !context.inProcessCalls
                && context.nesting < ThreadContext.MAX_NESTING - 1) {
            context.nesting++; // calls run here may send: they prepare their records one level up
            // A wait inside a view's call (callReturn through an aggregator) must not lend that view to the calls
            // run here: their plain calls go through the plain channels.
            int view = context.enterView(0);
            try {
                processCalls();
            } finally {
                context.enterView(view);
                context.nesting--;
            }
        }
    }

    /** True if the calling thread runs a call as worker {@code dest} (so a call to dest cannot run now). */
    boolean waitingInOwnCall(ThreadId dest) {
        ThreadContext context = contexts.existing();
        return context != null && context.inProcessCalls && context.isWorker(dest);
    }

    /** Starts a handler thread for every worker index no thread is attached as; returns once each is attached. */
    void startHandlerThreads() {
        for (int i = 0; i < threads; i++) {
            if (contexts.isAttached(i)) {
                continue;
            }
            int index = i;
            CompletableFuture<Void> ready = new CompletableFuture<>();
            Thread handler = Thread.ofPlatform().daemon().name("fabricrpc-handler-" + rank + "." + i).start(() -> {
                try {
                    runtime.attach(index);
                    ready.complete(null);
                } catch (RuntimeException e) {
                    ready.complete(null); // a user thread attached meanwhile: it serves this worker
                    return;
                }
                IdleStrategy idle = new BackoffIdleStrategy(100, 10, 1_000, 200_000);
                while (!runtime.isClosed()) {
                    try {
                        idle.idle(processCalls());
                    } catch (Throwable e) {
                        report(ThreadId.pack(rank, index), e); // reported; the handler lives on
                    }
                }
            });
            handlers.add(handler);
            ready.join();
        }
    }

    /** At close, once the runtime is closed: waits a bounded time for each handler thread to leave its loop. */
    void joinHandlers() {
        for (Thread handler : handlers) {
            try {
                handler.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
