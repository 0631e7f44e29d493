package io.fabricrpc.api;

import io.fabricrpc.fabric.ThreadId;
import io.fabricrpc.invocation.FabricRuntime;
import io.fabricrpc.transport.LocalRegion;
import io.fabricrpc.transport.RemoteAccess;
import io.fabricrpc.transport.RemoteRegion;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.IntFunction;

/**
 * A process's view of the job: P processes × T worker threads, each addressed by a {@link ThreadId}. Lambdas
 * given to the call primitives (Seriema's Table 1) run on the destination thread; their captured variables are
 * the call's context, serialized compactly (see {@link io.fabricrpc.serialization.CallRecordDescriptor}).
 *
 * <pre>{@code
 * try (Fabric fabric = Fabric.join(FabricConfig.fromEnvironment(registry))) {
 *     fabric.attach(0);                                   // this thread is worker 0 of this process
 *     fabric.call(new ThreadId(1, 0), () -> Tree.LOCAL.expand(node, move));
 *     while (!done) fabric.processCalls();                // run the calls addressed to this thread
 * }
 * }</pre>
 *
 * <p>Calls from one thread to one destination run in the order they were made. The call primitives return
 * {@code false} only when the destination's buffers are full and the messenger's policy is
 * {@link io.fabricrpc.messaging.FullPolicy#FAIL}; they throw {@link io.fabricrpc.serialization.UnregisteredClassException}
 * (before anything is sent) for captures of unregistered classes, {@link io.fabricrpc.messaging.MessagingException}
 * for a call larger than a chunk, and {@link io.fabricrpc.transport.PeerFailedException} once the destination's
 * process is gone. Errors raised by calls at the receiver go to {@link #onError}.
 */
public interface Fabric extends AutoCloseable {
    /** Bootstraps (authenticated join over the control channel) and connects this process to the job. */
    static Fabric join(FabricConfig config) {
        return FabricRuntime.join(config);
    }

    int rank();

    int size();

    int threadsPerProcess();

    /**
     * The context object of the worker thread running the current call (given to {@link #attach(int, Object)}),
     * for functions of any shape that need receiver-side state; null outside a worker.
     */
    @SuppressWarnings("unchecked")
    static <C> C currentContext() {
        return (C) FabricRuntime.currentContext();
    }

    /** The fabric of the calling worker or handler thread; null on other threads. */
    static Fabric current() {
        return FabricRuntime.current();
    }

    /** Makes the calling thread worker {@code index} of this process (it then runs {@link #processCalls()}). */
    void attach(int index);

    /** As {@link #attach(int)}, with a context object handed to {@link RemoteContextConsumer} calls. */
    void attach(int index, Object context);

    /** The calling thread's id ({@code rank, index}) if it is an attached worker. */
    ThreadId self();

    /** Runs the calls that have arrived for the calling worker thread; returns how many ran. */
    int processCalls();

    /** Starts one daemon handler thread for every worker index no thread has attached to. */
    void startHandlerThreads();

    boolean call(ThreadId dest, RemoteRunnable function);

    boolean call(ThreadId dest, RemoteRunnable function, Synchronizer sync);

    /**
     * Runs {@code function(context)} on {@code dest} with the destination thread's context object ({@link #context}
     * gives the same without a cast). A destination with no context, or one of another type than the function
     * takes, does not run it and reports a {@link io.fabricrpc.serialization.WrongContextException} to its
     * {@link #onError} listener.
     */
    boolean call(ThreadId dest, RemoteContextConsumer<?> function, Synchronizer sync);

    /**
     * The context-call primitives typed for destination contexts of {@code type}, obtained once and used with no
     * cast at each call site: {@code ContextCalls<Shard> shards = fabric.context(Shard.class);} then
     * {@code shards.call(dest, s -> s.put(k, v))}. Calls go through this fabric (or view).
     */
    <C> ContextCalls<C> context(Class<C> type);

    /**
     * Seriema's send-based call: one two-sided message to the destination process, which its service thread hands
     * to the destination worker. Needs no buffers set up in advance (no-setup), costs more per call than the
     * one-sided {@link #call}. Calls from one thread to one destination run in order (but not in order with that
     * thread's one-sided calls). Waits (bounded) while the destination's message queue is full.
     */
    boolean callSend(ThreadId dest, RemoteRunnable function);

    /** {@link #callSend(ThreadId, RemoteRunnable)} for a function of the destination thread's context. */
    boolean callSend(ThreadId dest, RemoteContextConsumer<?> function);

    /** {@code function(buffer)} on {@code dest}; the buffer's bytes travel with the call. */
    boolean callBuffer(ThreadId dest, RemoteBufferConsumer function, MemorySegment buffer, long offset, long length,
                       Synchronizer sync);

    /**
     * Writes {@code length} bytes of {@code source} one-sided into {@code destination} (a region the destination
     * process {@link #allocate allocated}), then runs {@code function(destination bytes)} on {@code dest}.
     * With a SENT synchronizer, {@code source} may be reused once it counts down.
     */
    boolean callBuffer(ThreadId dest, RemoteBufferConsumer function, LocalRegion source, long sourceOffset,
                       RemoteRegion destination, long destinationOffset, long length, Synchronizer sync);

    /** {@code dest} reads {@code length} bytes of {@code source} (this process's region) one-sided, then runs
     *  {@code function(bytes)}. */
    boolean callBuffer(ThreadId dest, RemoteBufferConsumer function, RemoteRegion source, long offset, long length,
                       Synchronizer sync);

    /**
     * Runs {@code function} on {@code dest} and returns its result, written back one-sided into this process's
     * memory. An attached worker keeps running its own incoming calls while it waits.
     *
     * @throws io.fabricrpc.serialization.RemoteInvocationException if the function threw at the destination
     * @throws IllegalStateException if made, from inside a call a worker runs, to that worker itself (it could run
     *         only after the current call returns)
     */
    <R> R callReturn(ThreadId dest, RemoteSupplier<R> function);

    /**
     * As {@link #callReturn}, completing the future instead of blocking. The future completes exceptionally with
     * {@link io.fabricrpc.serialization.RemoteInvocationException} if the function threw at the destination,
     * {@link io.fabricrpc.transport.PeerFailedException} if the destination's process dies, or a
     * {@link io.fabricrpc.messaging.MessagingException} after the call timeout.
     *
     * <p>Waiting on the returned future itself ({@code get}, {@code join}) from a fabric thread waits as
     * {@link #callReturn} does: it polls for the result and an attached worker keeps running its incoming calls, so
     * workers that wait on each other's results do not deadlock. The reply waits in the call's mailbox port until
     * collected, by the first of: a thread waiting on the future or on a stage derived from it, a worker of this
     * process in {@link #processCalls()}, or the next call that takes the port; stages derived from it complete on
     * that thread. A future nobody waits on in a process with no running worker stays pending until then.
     *
     * <p>Addressed to the calling worker itself, the call runs before this method returns (the worker first runs its
     * calls that arrived earlier, as a call to itself keeps their order) and the future is already complete. Made
     * from inside a call that worker runs, it runs after the current call returns; waiting for it there throws
     * {@link IllegalStateException} instead of deadlocking.
     */
    <R> CompletableFuture<R> callReturnAsync(ThreadId dest, RemoteSupplier<R> function);

    /** {@code function} on every worker thread of the job (this one included), through a broadcast tree. */
    void broadcast(RemoteRunnable function, Synchronizer sync);

    /** {@code function(buffer)} on every worker thread; the buffer travels down the tree with the call. */
    void broadcastBuffer(RemoteBufferConsumer function, MemorySegment buffer, long offset, long length,
                         Synchronizer sync);

    /**
     * Writes {@code source} into each process's region {@code destinations.apply(rank)} one-sided, then runs
     * {@code function(that region's bytes)} on every worker thread through the tree.
     */
    void broadcastBuffer(RemoteBufferConsumer function, LocalRegion source, long sourceOffset,
                         IntFunction<RemoteRegion> destinations, long destinationOffset, long length, Synchronizer sync);

    /** Every worker thread reads {@code source} (this process's region) one-sided and runs {@code function}. */
    void broadcastBuffer(RemoteBufferConsumer function, RemoteRegion source, long offset, long length,
                         Synchronizer sync);

    /**
     * Waits until every worker thread of the job (all {@link #size()} x {@link #threadsPerProcess()} attached
     * workers, as MPI_Barrier over all threads) has called it; on an attached worker only. While it waits, the
     * worker keeps running its incoming calls (workers that have not reached the barrier may be calling it). Barriers
     * are numbered per worker (generations), so consecutive barriers need nothing in between; every worker must make
     * the same sequence of barrier and {@link #allReduceSum} calls. A barrier does not wait for calls made before it
     * to run (use a CONSUMED {@link Synchronizer} for that). Waits at most the call timeout.
     *
     * @throws BarrierTimeoutException if not released within the timeout (the message names the generation and,
     *         on worker (0, 0), which workers had not arrived); the job's barriers are unusable afterwards
     * @throws io.fabricrpc.transport.PeerFailedException if a process of the job is gone, naming its rank
     * @throws IllegalStateException on a thread that is not an attached worker, or inside a call (it could not
     *         run the calls that release it)
     */
    void barrier();

    /** {@link #barrier()} with an explicit bound on the wait. */
    void barrier(java.time.Duration timeout);

    /**
     * A {@link #barrier()} at which each worker contributes {@code value}; returns the sum over every worker of the
     * job (wrapping on overflow), the same on all of them.
     */
    long allReduceSum(long value);

    /** Memory the transport can move (registered under RDMA) that calls can name as a source or destination. */
    LocalRegion allocate(long bytes, RemoteAccess access);

    /**
     * Allocates {@code bytes} in the memory of process {@code rank} (a no-setup service call answered by its service
     * thread) that this process may then access one-sided as {@code access} allows, and name in calls to that process
     * (e.g. as the destination of {@link #callBuffer(ThreadId, RemoteBufferConsumer, LocalRegion, long, RemoteRegion,
     * long, long, Synchronizer) callBuffer}). Blocks until the answer, at most the call timeout.
     *
     * @throws io.fabricrpc.memory.RemoteAllocationException if the process refuses (over its
     *         {@code memory.remoteAllocationLimitBytes}, allocation failed there)
     * @throws io.fabricrpc.transport.PeerFailedException if the process is or becomes dead before answering
     * @throws IllegalArgumentException if {@code bytes} is not positive or {@code access} is {@link RemoteAccess#NONE}
     */
    RemoteRegion allocateRemote(int rank, long bytes, RemoteAccess access);

    /**
     * Frees a region this process got from {@link #allocateRemote} on {@code rank}; it must no longer be used.
     *
     * @throws io.fabricrpc.memory.RemoteAllocationException if {@code rank} did not grant that region to this process
     *         (or it was freed already)
     * @throws io.fabricrpc.transport.PeerFailedException if the process is or becomes dead before answering
     */
    void freeRemote(int rank, RemoteRegion region);

    /** Receives failures of calls run here (unknown function, corrupt record, a call that threw). */
    void onError(BiConsumer<ThreadId, Throwable> listener);

    /** Sends every queued call (RETRY_ASYNC) and waits until the queues are empty. */
    void flush();

    /** Orderly shutdown: flushes, waits for every process at a barrier, releases everything. */
    @Override
    void close();
}
