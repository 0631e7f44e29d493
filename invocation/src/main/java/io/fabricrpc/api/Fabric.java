package io.fabricrpc.api;


import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
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
 * {@link io.fabricrpc.api.FullPolicy#FAIL}; they throw {@link io.fabricrpc.serialization.UnregisteredClassException}
 * (before anything is sent) for captures of unregistered classes, {@link io.fabricrpc.api.MessagingException}
 * for a call larger than a chunk, and {@link io.fabricrpc.api.PeerFailedException} once the destination's
 * process is gone. Errors raised by calls at the receiver go to {@link #onError}.
 *
 * <h2>Calls with a result: one outcome each</h2>
 * Every {@code callReturn} and {@code callReturnAsync} (and their {@link ContextCalls} forms) ends exactly once,
 * within its deadline (its own timeout, or {@link FabricConfig#withCallTimeout the call timeout}), whatever the
 * caller waits with. Its outcome is one of:
 * <table class="striped">
 * <caption>Outcomes of a call with a result</caption>
 * <tr><th>outcome</th><th>did the function run?</th></tr>
 * <tr><td>its value</td><td>once</td></tr>
 * <tr><td>{@link RemoteInvocationException}</td><td>once, and threw (or was refused there: the message says)</td></tr>
 * <tr><td>{@link DeadlineExceededException}</td><td>{@link DeadlineExceededException#mayHaveRun()} tells: not
 *     if the call was never sent, else unknown</td></tr>
 * <tr><td>{@link PeerFailedException}</td><td>not, if thrown by the call method itself before sending (its message
 *     says "was not sent"); else unknown ("in flight: it may have run")</td></tr>
 * <tr><td>{@link java.util.concurrent.CancellationException} ({@code future.cancel})</td><td>unknown: it may
 *     still run; its result is dropped</td></tr>
 * <tr><td>anything thrown by the call method itself (an unregistered capture, all ports busy, a bad timeout)</td>
 *     <td>not: nothing was sent</td></tr>
 * </table>
 * A call ended without its result never hands that result to a later call: its mailbox port stays reserved until
 * the late reply arrives and is dropped. The fabric's background agent enforces deadlines even when no thread of the
 * process polls, so {@code CompletableFuture.allOf(futures).join()} never outlives the calls' deadlines.
 *
 * <p>Waiting: a fabric future's own {@code get()}/{@code join()} (and those of stages derived from it) run the
 * waiting worker's incoming calls. Any other wait ({@code allOf(...).join()}, {@code anyOf}, a future of your own)
 * blocks the thread: a worker blocked so cannot answer the peers that wait for it, so workers that fan out to each
 * other must wait with {@link #awaitAll(Collection)}. A worker that blocks for about a second while calls wait for
 * it is named in a warning (logger {@code fabricrpc.workers}) with its stack.
 */
public interface Fabric extends AutoCloseable {
    /**
     * Bootstraps (authenticated join over the control channel) and connects this process to the job. The first join
     * of a JVM also installs fabricrpc's compiler directives ({@code fabric.jit.directives}).
     *
     * @param config who this process is, the transport, the serialization registry and the messenger settings
     * @return this process's fabric, joined and connected to every other process of the job
     * @throws io.fabricrpc.doctor.JoinCheckException if this machine cannot run the transport (naming the fix)
     * @throws io.fabricrpc.api.ControlPlaneException if the job did not form within the join timeout
     */
    static Fabric join(FabricConfig config) {
        return FabricProvider.instance().join(config);
    }

    /**
     * This process's rank.
     *
     * @return the rank, in [0, {@link #size()})
     */
    int rank();

    /**
     * The number of processes in the job.
     *
     * @return P
     */
    int size();

    /**
     * Worker threads per process, the same in every process.
     *
     * @return T
     */
    int threadsPerProcess();

    /**
     * The context object of the worker thread running the current call (given to {@link #attach(int, Object)}),
     * for functions of any shape that need receiver-side state; null outside a worker.
     *
     * @param <C> the context's type, as the caller expects it (unchecked)
     * @return the context, or null
     */
    @SuppressWarnings("unchecked")
    static <C> C currentContext() {
        return (C) FabricProvider.instance().currentContext();
    }

    /**
     * The fabric of the calling worker or handler thread; null on other threads.
     *
     * @return the fabric whose call is running here, or null
     */
    static Fabric current() {
        return FabricProvider.instance().current();
    }

    /**
     * Makes the calling thread worker {@code index} of this process (it then runs {@link #processCalls()}).
     *
     * @param index the worker index, in [0, {@link #threadsPerProcess()})
     */
    void attach(int index);

    /**
     * As {@link #attach(int)}, with a context object handed to {@link RemoteContextConsumer} calls.
     *
     * @param index the worker index, in [0, {@link #threadsPerProcess()})
     * @param context the object context calls to this worker receive; may be null
     */
    void attach(int index, Object context);

    /**
     * The calling thread's id ({@code rank, index}); only an attached worker has one.
     *
     * @return the id
     * @throws IllegalStateException on a thread that is not an attached worker
     */
    ThreadId self();

    /**
     * Runs the calls that have arrived for the calling worker thread.
     *
     * @return how many ran
     */
    int processCalls();

    /** Starts one daemon handler thread for every worker index no thread has attached to. */
    void startHandlerThreads();

    /**
     * Runs {@code function} on {@code dest}, one-sided through this thread's messenger for that destination.
     *
     * @param dest the worker thread that runs it
     * @param function the lambda; its captured values are the message
     * @return false only if the destination's buffers are full and the messenger's policy is FAIL
     */
    boolean call(ThreadId dest, RemoteRunnable function);

    /**
     * As {@link #call(ThreadId, RemoteRunnable)}, counting down {@code sync} once the call is sent or consumed.
     *
     * @param dest the worker thread that runs it
     * @param function the lambda; its captured values are the message
     * @param sync counts the call down (SENT or CONSUMED); may be null
     * @return false only if the destination's buffers are full and the messenger's policy is FAIL
     */
    boolean call(ThreadId dest, RemoteRunnable function, Synchronizer sync);

    /**
     * Runs {@code function(context)} on {@code dest} with the destination thread's context object ({@link #context}
     * gives the same without a cast). A destination with no context, or one of another type than the function
     * takes, does not run it and reports a {@link io.fabricrpc.serialization.WrongContextException} to its
     * {@link #onError} listener.
     *
     * @param dest the worker thread that runs it
     * @param function the lambda of the destination's context; its captured values are the message
     * @param sync counts the call down (SENT or CONSUMED); may be null
     * @return false only if the destination's buffers are full and the messenger's policy is FAIL
     */
    boolean call(ThreadId dest, RemoteContextConsumer<?> function, Synchronizer sync);

    /**
     * The context-call primitives typed for destination contexts of {@code type}, obtained once and used with no
     * cast at each call site: {@code ContextCalls<Shard> shards = fabric.context(Shard.class);} then
     * {@code shards.call(dest, s -> s.put(k, v))}. Calls go through this fabric (or view).
     *
     * @param <C> the destination threads' context type
     * @param type the destination threads' context class
     * @return the typed call primitives
     */
    <C> ContextCalls<C> context(Class<C> type);

    /**
     * Seriema's send-based call: one two-sided message to the destination process, which its service thread hands
     * to the destination worker. Needs no buffers set up in advance (no-setup), costs more per call than the
     * one-sided {@link #call}. Calls from one thread to one destination run in order (but not in order with that
     * thread's one-sided calls). Waits (bounded) while the destination's message queue is full.
     *
     * @param dest the worker thread that runs it
     * @param function the lambda; its captured values are the message
     * @return true once the message is queued at the destination
     */
    boolean callSend(ThreadId dest, RemoteRunnable function);

    /**
     * {@link #callSend(ThreadId, RemoteRunnable)} for a function of the destination thread's context.
     *
     * @param dest the worker thread that runs it
     * @param function the lambda of the destination's context; its captured values are the message
     * @return true once the message is queued at the destination
     */
    boolean callSend(ThreadId dest, RemoteContextConsumer<?> function);

    /**
     * {@code function(buffer)} on {@code dest}; the buffer's bytes travel with the call.
     *
     * @param dest the worker thread that runs it
     * @param function the lambda given the buffer's bytes; its captured values are the message
     * @param buffer memory holding the bytes
     * @param offset where they start in {@code buffer}
     * @param length how many bytes travel
     * @param sync counts the call down (SENT or CONSUMED); may be null
     * @return false only if the destination's buffers are full and the messenger's policy is FAIL
     */
    boolean callBuffer(ThreadId dest, RemoteBufferConsumer function, MemorySegment buffer, long offset, long length,
                       Synchronizer sync);

    /**
     * Writes {@code length} bytes of {@code source} one-sided into {@code destination} (a region the destination
     * process {@link #allocate allocated}), then runs {@code function(destination bytes)} on {@code dest}.
     * With a SENT synchronizer, {@code source} may be reused once it counts down.
     *
     * @param dest the worker thread that runs it
     * @param function the lambda given the written bytes; its captured values are the message
     * @param source this process's region holding the bytes
     * @param sourceOffset where they start in {@code source}
     * @param destination a region of {@code dest}'s process, from its {@link #allocate} or {@link #allocateRemote}
     * @param destinationOffset where they go in {@code destination}
     * @param length how many bytes
     * @param sync counts the call down (SENT or CONSUMED); may be null
     * @return false only if the destination's buffers are full and the messenger's policy is FAIL
     */
    boolean callBuffer(ThreadId dest, RemoteBufferConsumer function, LocalRegion source, long sourceOffset,
                       RemoteRegion destination, long destinationOffset, long length, Synchronizer sync);

    /**
     * {@code dest} reads {@code length} bytes of {@code source} (this process's region) one-sided, then runs
     * {@code function(bytes)}.
     *
     * @param dest the worker thread that runs it
     * @param function the lambda given the bytes read; its captured values are the message
     * @param source a region of this process the destination may read
     * @param offset where the bytes start in {@code source}
     * @param length how many bytes
     * @param sync counts the call down (SENT or CONSUMED); may be null
     * @return false only if the destination's buffers are full and the messenger's policy is FAIL
     */
    boolean callBuffer(ThreadId dest, RemoteBufferConsumer function, RemoteRegion source, long offset, long length,
                       Synchronizer sync);

    /**
     * Runs {@code function} on {@code dest} and returns its result, written back one-sided into this process's
     * memory. An attached worker keeps running its own incoming calls while it waits.
     *
     * @param <R> the result type
     * @param dest the worker thread that runs it
     * @param function the lambda; its captured values are the message
     * @return the function's result
     * @throws io.fabricrpc.api.RemoteInvocationException if the function threw at the destination
     * @throws io.fabricrpc.api.ResultTooLargeException if the result is larger than fabric.mailbox.maxMessageBytes
     *         ({@link FabricConfig#withReturnSlotBytes})
     * @throws IllegalStateException if made, from inside a call a worker runs, to that worker itself (it could run
     *         only after the current call returns)
     */
    <R> R callReturn(ThreadId dest, RemoteSupplier<R> function);

    /**
     * {@link #callReturn(ThreadId, RemoteSupplier)} with its own deadline instead of the call timeout.
     *
     * @param <R> the result type
     * @param dest the worker thread that runs it
     * @param timeout how long the call may take, from now, before it fails with {@link DeadlineExceededException}
     * @param function the lambda; its captured values are the message
     * @return the function's result
     */
    <R> R callReturn(ThreadId dest, Duration timeout, RemoteSupplier<R> function);

    /**
     * As {@link #callReturn}, completing the future instead of blocking. The future completes exceptionally with
     * {@link io.fabricrpc.api.RemoteInvocationException} if the function threw at the destination,
     * {@link io.fabricrpc.api.PeerFailedException} if the destination's process dies, or a
     * {@link io.fabricrpc.api.MessagingException} after the call timeout.
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
     *
     * @param <R> the result type
     * @param dest the worker thread that runs it
     * @param function the lambda; its captured values are the message
     * @return a future of the function's result
     */
    <R> CompletableFuture<R> callReturnAsync(ThreadId dest, RemoteSupplier<R> function);

    /**
     * {@link #callReturnAsync(ThreadId, RemoteSupplier)} with its own deadline instead of the call timeout: the
     * future fails with {@link DeadlineExceededException} once it passes, even if no thread of this process polls.
     * {@code future.cancel(...)} ends the call at once (outcome unknown).
     *
     * @param <R> the result type
     * @param dest the worker thread that runs it
     * @param timeout how long the call may take, from now
     * @param function the lambda; its captured values are the message
     * @return a future of the function's result
     */
    <R> CompletableFuture<R> callReturnAsync(ThreadId dest, Duration timeout, RemoteSupplier<R> function);

    /**
     * Waits until every future is done, as {@code CompletableFuture.allOf(futures).join()} does, but keeps the
     * fabric moving meanwhile: an attached worker runs its incoming calls and every waiter collects arrived results.
     * Workers that fan out calls to each other and wait here cannot deadlock, whatever the futures are built of
     * ({@code thenCompose}, {@code thenCombine}, {@code allOf}, ... of the fabric's futures).
     *
     * @param timeout how long to wait at most
     * @param futures the futures to wait for; any kind
     * @throws java.util.concurrent.CompletionException with the first failure, in the given order, if any failed
     * @throws DeadlineExceededException if some are still not done after {@code timeout}
     */
    void awaitAll(Duration timeout, Collection<? extends Future<?>> futures);

    /**
     * {@link #awaitAll(Duration, Collection)} bounded by the call timeout.
     *
     * @param futures the futures to wait for; any kind
     */
    void awaitAll(Collection<? extends Future<?>> futures);

    /**
     * {@link #awaitAll(Duration, Collection)} bounded by the call timeout.
     *
     * @param futures the futures to wait for; any kind
     */
    default void awaitAll(CompletableFuture<?>... futures) {
        awaitAll(Arrays.asList(futures));
    }

    /**
     * {@code function} on every worker thread of the job (this one included), through a broadcast tree.
     *
     * @param function the lambda; its captured values are the message
     * @param sync counts the call down once at every worker (SENT or CONSUMED); may be null
     */
    void broadcast(RemoteRunnable function, Synchronizer sync);

    /**
     * {@code function(buffer)} on every worker thread; the buffer travels down the tree with the call.
     *
     * @param function the lambda given the buffer's bytes
     * @param buffer memory holding the bytes
     * @param offset where they start in {@code buffer}
     * @param length how many bytes travel
     * @param sync counts the call down once at every worker (SENT or CONSUMED); may be null
     */
    void broadcastBuffer(RemoteBufferConsumer function, MemorySegment buffer, long offset, long length,
                         Synchronizer sync);

    /**
     * Writes {@code source} into each process's region {@code destinations.apply(rank)} one-sided, then runs
     * {@code function(that region's bytes)} on every worker thread through the tree.
     *
     * @param function the lambda given the written bytes
     * @param source this process's region holding the bytes
     * @param sourceOffset where they start in {@code source}
     * @param destinations for each rank, the region of that process the bytes go to
     * @param destinationOffset where they go in each region
     * @param length how many bytes
     * @param sync counts the call down once at every worker (SENT or CONSUMED); may be null
     */
    void broadcastBuffer(RemoteBufferConsumer function, LocalRegion source, long sourceOffset,
                         IntFunction<RemoteRegion> destinations, long destinationOffset, long length, Synchronizer sync);

    /**
     * Every worker thread reads {@code source} (this process's region) one-sided and runs {@code function}.
     *
     * @param function the lambda given the bytes read
     * @param source a region of this process every process may read
     * @param offset where the bytes start in {@code source}
     * @param length how many bytes
     * @param sync counts the call down once at every worker (SENT or CONSUMED); may be null
     */
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
     * @throws io.fabricrpc.api.PeerFailedException if a process of the job is gone, naming its rank
     * @throws IllegalStateException on a thread that is not an attached worker, or inside a call (it could not
     *         run the calls that release it)
     */
    void barrier();

    /**
     * {@link #barrier()} with an explicit bound on the wait.
     *
     * @param timeout the longest wait
     * @throws BarrierTimeoutException if not released within {@code timeout}
     */
    void barrier(java.time.Duration timeout);

    /**
     * A {@link #barrier()} at which each worker contributes {@code value}; returns the sum over every worker of the
     * job (wrapping on overflow), the same on all of them.
     *
     * @param value this worker's contribution
     * @return the sum over every worker
     * @throws BarrierTimeoutException if not released within the call timeout
     */
    long allReduceSum(long value);

    /**
     * Memory the transport can move (registered under RDMA) that calls can name as a source or destination.
     *
     * @param bytes the region's size
     * @param access what other processes may do with it one-sided
     * @return the region, in this process
     */
    LocalRegion allocate(long bytes, RemoteAccess access);

    /**
     * Allocates {@code bytes} in the memory of process {@code rank} (a no-setup service call answered by its service
     * thread) that this process may then access one-sided as {@code access} allows, and name in calls to that process
     * (e.g. as the destination of {@link #callBuffer(ThreadId, RemoteBufferConsumer, LocalRegion, long, RemoteRegion,
     * long, long, Synchronizer) callBuffer}). Blocks until the answer, at most the call timeout.
     *
     * @param rank the process whose memory it is
     * @param bytes the region's size
     * @param access what this process may do with it one-sided
     * @return the region, in process {@code rank}
     *
     * @throws io.fabricrpc.api.RemoteAllocationException if the process refuses (over its
     *         {@code memory.remoteAllocationLimitBytes}, allocation failed there)
     * @throws io.fabricrpc.api.PeerFailedException if the process is or becomes dead before answering
     * @throws IllegalArgumentException if {@code bytes} is not positive or {@code access} is {@link RemoteAccess#NONE}
     */
    RemoteRegion allocateRemote(int rank, long bytes, RemoteAccess access);

    /**
     * Frees a region this process got from {@link #allocateRemote} on {@code rank}; it must no longer be used.
     *
     * @param rank the process whose memory it is
     * @param region the region {@link #allocateRemote} returned
     *
     * @throws io.fabricrpc.api.RemoteAllocationException if {@code rank} did not grant that region to this process
     *         (or it was freed already)
     * @throws io.fabricrpc.api.PeerFailedException if the process is or becomes dead before answering
     */
    void freeRemote(int rank, RemoteRegion region);

    /**
     * Receives failures of calls run here (unknown function, corrupt record, a call that threw), and a fault of this
     * process's own transport memory, reported with this rank's thread 0, after which the process leaves the job as
     * failed (every wait and call then fails with {@link io.fabricrpc.api.PeerFailedException}).
     *
     * @param listener given the calling thread's id and the failure; replaces the default, which logs it
     */
    void onError(BiConsumer<ThreadId, Throwable> listener);

    /** Sends every queued call (RETRY_ASYNC) and waits until the queues are empty. */
    void flush();

    /** Orderly shutdown: flushes, waits for every process at a barrier, releases everything. */
    @Override
    void close();
}
