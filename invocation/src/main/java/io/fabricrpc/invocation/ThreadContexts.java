package io.fabricrpc.invocation;

import io.fabricrpc.api.ThreadId;
import io.fabricrpc.messaging.ReceivingThread;
import io.fabricrpc.messaging.RecordChannel;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.BooleanSupplier;

/**
 * Which {@link ThreadContext} each thread of one process has: a ThreadLocal, and the same contexts direct-mapped by
 * thread id for the call path. A slot holds a context of the thread it names only: claimed by CAS when empty or when
 * its thread has ended, then changed by its own thread only; other threads read it only to compare its final
 * {@code thread}. A worker index is attached to one thread for the fabric's lifetime (CAS on {@code attached}).
 */
final class ThreadContexts {
    /*
     * A thread finds its own context in three dependent loads where the ThreadLocal probe takes eight, and the call
     * path is a chain of such loads. A thread whose slot a live thread holds keeps using the ThreadLocal.
     */
    static final int SLOTS = 256;
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(ThreadContext[].class);
    private static final ThreadLocal<FabricRuntime> CURRENT = new ThreadLocal<>();
    private static final ThreadLocal<Object> CURRENT_CONTEXT = new ThreadLocal<>();

    private final FabricRuntime runtime;
    private final Routes.Network network;
    private final int rank;
    private final int threads;
    private final BooleanSupplier closed;
    private final ThreadLocal<ThreadContext> contexts = new ThreadLocal<>();
    private final ThreadContext[] slots = new ThreadContext[SLOTS];
    private final List<ThreadContext> all = new CopyOnWriteArrayList<>();
    private final AtomicInteger ephemeralThreads = new AtomicInteger();
    private final AtomicReferenceArray<Thread> attached;
    /** Each attached worker's context, by worker index (set once, at attach). */
    private final AtomicReferenceArray<ThreadContext> workers;
    /** Each worker's receiving side, by worker index. */
    private final ReceivingThread[] receiving;

    ThreadContexts(FabricRuntime runtime, Routes.Network network, ReceivingThread[] receiving, int rank,
                   BooleanSupplier closed) {
        this.runtime = runtime;
        this.network = network;
        this.receiving = receiving;
        this.rank = rank;
        this.threads = receiving.length;
        this.closed = closed;
        this.attached = new AtomicReferenceArray<>(threads);
        this.workers = new AtomicReferenceArray<>(threads);
    }

    /** The context of worker {@code index} once a thread attached as it, else null (any thread). */
    ThreadContext workerContext(int index) {
        return workers.get(index);
    }

    /** The fabric whose worker the calling thread is, or null. */
    static FabricRuntime current() {
        return CURRENT.get();
    }

    /** The context object the calling worker was attached with, or null. */
    static Object currentContext() {
        return CURRENT_CONTEXT.get();
    }

    /** Makes the calling thread worker {@code index}, whose calls see {@code userContext}. */
    void attach(int index, Object userContext) {
        if (index < 0 || index >= threads) {
            throw new IllegalArgumentException("worker index " + index + " outside [0, " + threads + ")");
        }
        ThreadContext existing = contexts.get();
        if (existing != null && existing.workerIndex >= 0) {
            throw new IllegalStateException("this thread is already worker " + existing.workerIndex);
        }
        if (!attached.compareAndSet(index, null, Thread.currentThread())) {
            throw new IllegalStateException("worker " + index + " of rank " + rank + " is already attached to thread '"
                    + attached.get(index).getName() + "'");
        }
        ThreadContext context = new ThreadContext(network, ThreadId.pack(rank, index), index, receiving[index],
                new CallReceiver(runtime, new ThreadId(rank, index), userContext));
        contexts.set(context);
        workers.set(index, context);
        claimSlot(context);
        CURRENT.set(runtime);
        CURRENT_CONTEXT.set(userContext);
        all.add(context);
    }

    boolean isAttached(int index) {
        return attached.get(index) != null;
    }

    /** The calling worker's id. */
    ThreadId self() {
        ThreadContext context = contexts.get();
        if (context == null || context.workerIndex < 0) {
            throw new IllegalStateException("thread '" + Thread.currentThread().getName() + "' is not an attached worker");
        }
        return new ThreadId(rank, context.workerIndex);
    }

    /** The calling worker's context, which has a receiver. */
    ThreadContext worker() {
        ThreadContext context = contexts.get();
        if (context == null || context.receiver == null) {
            throw new IllegalStateException("not an attached worker: " + Thread.currentThread().getName());
        }
        return context;
    }

    /** The calling thread's context; threads that are not workers get an id past the workers'. */
    /** The direct-mapped slots, for a call path that reads them without this object (see {@link #context()}). */
    ThreadContext[] slots() {
        return slots;
    }

    ThreadContext context() {
        ThreadContext context = inSlot(slots, Thread.currentThread());
        return context != null ? context : contextSlow();
    }

    /** {@code thread}'s context if its slot in {@code slots} holds it, else null (three dependent loads). */
    static ThreadContext inSlot(ThreadContext[] slots, Thread thread) {
        ThreadContext context = slots[slot(thread)];
        return context != null && context.thread == thread ? context : null;
    }

    private ThreadContext contextSlow() {
        ThreadContext context = contexts.get();
        if (context == null) {
            if (closed.getAsBoolean()) {
                throw new IllegalStateException("fabric of rank " + rank + " is closed");
            }
            int index = threads + ephemeralThreads.getAndIncrement();
            context = new ThreadContext(network, ThreadId.pack(rank, index));
            contexts.set(context);
            all.add(context);
        }
        claimSlot(context);
        return context;
    }

    /** The calling thread's context if it has one, else null (never creates one). */
    ThreadContext existing() {
        Thread thread = Thread.currentThread();
        ThreadContext context = slots[slot(thread)];
        return context != null && context.thread == thread ? context : contexts.get();
    }

    private static int slot(Thread thread) {
        return (int) thread.threadId() & (SLOTS - 1);
    }

    /** Puts the calling thread's {@code context} in its slot unless another live thread holds the slot. */
    private void claimSlot(ThreadContext context) {
        int slot = slot(context.thread);
        ThreadContext holder = (ThreadContext) SLOT.getAcquire(slots, slot);
        if (holder == null || holder.thread == context.thread || !holder.thread.isAlive()) {
            // Volatile CAS: the context is fully built before its slot names it. Losing means another thread took it.
            SLOT.compareAndSet(slots, slot, holder, context);
        }
    }

    /**
     * Flushes the calling thread's channels, and what other threads' channels let another thread flush: their
     * deferred flags and, for the aggregators (which lock), their batches. A plain messenger's sending state belongs
     * to its thread, which may be sending right now.
     */
    void flushAll() {
        Thread me = Thread.currentThread();
        for (ThreadContext context : all) {
            for (RecordChannel channel : context.allChannels()) {
                if (context.thread == me) {
                    channel.flush(); // bounded by the channel's timeout and the destination's liveness
                } else {
                    channel.flushFromAnotherThread();
                }
            }
        }
    }

    /** At close: every context's channels, receiver and broadcast memory. */
    void closeAll() {
        for (ThreadContext context : all) {
            for (RecordChannel channel : context.allChannels()) {
                channel.close();
            }
            if (context.receiver != null) {
                context.receiver.close();
            }
            context.broadcasts.close();
        }
    }
}
