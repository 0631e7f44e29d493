package io.fabricrpc.invocation;

import io.fabricrpc.api.ContextCalls;
import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.RemoteBufferConsumer;
import io.fabricrpc.api.RemoteContextConsumer;
import io.fabricrpc.api.RemoteRunnable;
import io.fabricrpc.api.RemoteSupplier;
import io.fabricrpc.api.Synchronizer;
import io.fabricrpc.fabric.ControlPlane;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.messaging.SendingAgent;
import io.fabricrpc.api.SerializationRegistry;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.transport.Transport;

import java.io.Serializable;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.function.BiConsumer;
import java.util.function.IntFunction;

/**
 * The {@link Fabric} of one process: holds the parts {@link RuntimeBootstrap} wires and delegates to them. The
 * one-sided call path stays here, force-inlined into callers (jit-directives.json), with what it reads on every
 * call (the thread-context slots, the job's shape) in fields of its own: the path is a chain of dependent loads, and
 * each object it does not pass through is one load fewer.
 */
public final class FabricRuntime implements Fabric {
    private final FabricConfig config;
    private final RuntimeBootstrap.Parts parts;
    private final ThreadContexts contexts;
    private final Routes.Network network;
    private final ThreadContext[] slots;
    private final int jobSize;
    private final int jobThreads;
    private volatile boolean closed;

    private FabricRuntime(FabricConfig config) {
        this.config = config;
        this.parts = RuntimeBootstrap.start(config, this);
        this.contexts = parts.contexts();
        this.network = parts.network();
        this.slots = contexts.slots();
        this.jobSize = config.job().size();
        this.jobThreads = config.job().threadsPerProcess();
    }

    public static FabricRuntime join(FabricConfig config) {
        return RuntimeBootstrap.join(config, FabricRuntime::new);
    }

    public static Object currentContext() {
        return ThreadContexts.currentContext();
    }

    public static FabricRuntime current() {
        return ThreadContexts.current();
    }

    /** This process's published counts per counter type, or null when counters are off ({@code fabric.counters}). */
    public io.fabricrpc.counters.ProcessCounters processCounters() {
        return parts.counters() == null ? null : parts.counters().totals();
    }

    /** The control plane (liveness, membership). */
    public ControlPlane controlPlane() {
        return parts.control();
    }

    /** Shutdown signals the calling worker has received so far. */
    public long shutdownSignalsReceived() {
        return contexts.worker().receiver.shutdownSignals;
    }

    @Override
    public int rank() {
        return config.job().rank();
    }

    @Override
    public int size() {
        return config.job().size();
    }

    @Override
    public int threadsPerProcess() {
        return config.job().threadsPerProcess();
    }

    @Override
    public void attach(int index) {
        attach(index, null);
    }

    @Override
    public void attach(int index, Object userContext) {
        contexts.attach(index, userContext);
    }

    @Override
    public ThreadId self() {
        return contexts.self();
    }

    @Override
    public int processCalls() {
        return parts.workers().processCalls();
    }

    @Override
    public void startHandlerThreads() {
        parts.workers().startHandlerThreads();
    }

    @Override
    public void onError(BiConsumer<ThreadId, Throwable> listener) {
        parts.workers().onError(listener);
    }

    @Override
    public boolean call(ThreadId dest, RemoteRunnable function) {
        // call(dest, function, null) written out: one inlining level fewer (jit-directives.json says why that counts)
        ThreadContext context = callingContext();
        Routes.Route route = context.route(globalIndex(dest));
        return OneSidedCalls.send(route, OneSidedCalls.prepare(context, route, function), InvocationRecords.CALL, null);
    }

    /** {@link ThreadContexts#context()} with the slots read from here: one dependent load fewer per call. */
    private ThreadContext callingContext() {
        ThreadContext context = ThreadContexts.inSlot(slots, Thread.currentThread());
        return context != null ? context : contexts.context();
    }

    /** {@link Routes.Network#globalIndex} from this object's own copy of the job's shape. */
    private int globalIndex(ThreadId dest) {
        return Routes.Network.globalIndex(dest, jobSize, jobThreads);
    }

    @Override
    public boolean call(ThreadId dest, RemoteRunnable function, Synchronizer sync) {
        ThreadContext context = callingContext();
        Routes.Route route = context.route(globalIndex(dest));
        return OneSidedCalls.send(route, OneSidedCalls.prepare(context, route, function), InvocationRecords.CALL, sync);
    }

    @Override
    public boolean call(ThreadId dest, RemoteContextConsumer<?> function, Synchronizer sync) {
        ThreadContext context = callingContext();
        Routes.Route route = context.route(globalIndex(dest));
        return OneSidedCalls.send(route, OneSidedCalls.prepare(context, route, function), InvocationRecords.CALL, sync);
    }

    /** {@link #call} through {@code view}'s channels (a {@link FabricView}): nothing to switch or restore. */
    boolean callInView(int view, ThreadId dest, Serializable function, Synchronizer sync) {
        ThreadContext context = callingContext();
        Routes.Route route = context.route(view, globalIndex(dest));
        return OneSidedCalls.send(route, OneSidedCalls.prepare(context, route, function), InvocationRecords.CALL, sync);
    }

    @Override
    public <C> ContextCalls<C> context(Class<C> type) {
        return new TypedContextCalls<>(this, this, type);
    }

    @Override
    public boolean callSend(ThreadId dest, RemoteRunnable function) {
        return parts.sendCalls().send(contexts.context(), dest, network.globalIndex(dest), function);
    }

    @Override
    public boolean callSend(ThreadId dest, RemoteContextConsumer<?> function) {
        return parts.sendCalls().send(contexts.context(), dest, network.globalIndex(dest), function);
    }

    @Override
    public boolean callBuffer(ThreadId dest, RemoteBufferConsumer function, MemorySegment buffer, long offset,
                              long length, Synchronizer sync) {
        return OneSidedCalls.callBuffer(contexts.context(), network.globalIndex(dest), function, buffer, offset,
                length, sync);
    }

    @Override
    public boolean callBuffer(ThreadId dest, RemoteBufferConsumer function, LocalRegion source, long sourceOffset,
                              RemoteRegion destination, long destinationOffset, long length, Synchronizer sync) {
        return OneSidedCalls.callWritten(contexts, network.globalIndex(dest), link(dest.rank()), function, source,
                sourceOffset, destination, destinationOffset, length, sync);
    }

    @Override
    public boolean callBuffer(ThreadId dest, RemoteBufferConsumer function, RemoteRegion source, long offset,
                              long length, Synchronizer sync) {
        return OneSidedCalls.callRead(contexts.context(), network.globalIndex(dest), function, source, offset,
                length, sync);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <R> R callReturn(ThreadId dest, RemoteSupplier<R> function) {
        return (R) callReturnOf(dest, function, parts.returns().defaultTimeoutNanos());
    }

    @Override
    @SuppressWarnings("unchecked")
    public <R> R callReturn(ThreadId dest, Duration timeout, RemoteSupplier<R> function) {
        return (R) callReturnOf(dest, function, timeoutNanos(timeout));
    }

    Object callReturnOf(ThreadId dest, Serializable function, long timeoutNanos) {
        int global = network.globalIndex(dest);
        return parts.returns().call(contexts.context().refuseBlockingCallToSelf(dest), global, dest, function,
                timeoutNanos);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <R> CompletableFuture<R> callReturnAsync(ThreadId dest, RemoteSupplier<R> function) {
        return (CompletableFuture<R>) callReturnAsyncOf(dest, function, parts.returns().defaultTimeoutNanos());
    }

    @Override
    @SuppressWarnings("unchecked")
    public <R> CompletableFuture<R> callReturnAsync(ThreadId dest, Duration timeout, RemoteSupplier<R> function) {
        return (CompletableFuture<R>) callReturnAsyncOf(dest, function, timeoutNanos(timeout));
    }

    CompletableFuture<?> callReturnAsyncOf(ThreadId dest, Serializable function, long timeoutNanos) {
        ThreadContext context = contexts.context();
        return parts.returns().callAsync(context, network.globalIndex(dest), dest, context.isWorker(dest), function,
                timeoutNanos);
    }

    /** A per-call timeout as nanoseconds: positive, else the call is refused before it is sent. */
    static long timeoutNanos(Duration timeout) {
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("a call's timeout must be positive, got " + timeout
                    + " (the call was not sent)");
        }
        return timeout.compareTo(Duration.ofDays(365)) > 0 ? Duration.ofDays(365).toNanos() : timeout.toNanos();
    }

    @Override
    public void awaitAll(Duration timeout, Collection<? extends Future<?>> futures) {
        Waits.awaitAll(this, timeout, futures);
    }

    @Override
    public void awaitAll(Collection<? extends Future<?>> futures) {
        Waits.awaitAll(this, config.callTimeout(), futures);
    }

    @Override
    public void broadcast(RemoteRunnable function, Synchronizer sync) {
        parts.broadcasts().broadcast(function, sync);
    }

    @Override
    public void broadcastBuffer(RemoteBufferConsumer function, MemorySegment buffer, long offset, long length,
                                Synchronizer sync) {
        parts.broadcasts().inline(function, buffer, offset, length, sync);
    }

    @Override
    public void broadcastBuffer(RemoteBufferConsumer function, LocalRegion source, long sourceOffset,
                                IntFunction<RemoteRegion> destinations, long destinationOffset, long length,
                                Synchronizer sync) {
        parts.broadcasts().written(function, source, sourceOffset, destinations, destinationOffset, length, sync);
    }

    @Override
    public void broadcastBuffer(RemoteBufferConsumer function, RemoteRegion source, long offset, long length,
                                Synchronizer sync) {
        parts.broadcasts().read(function, source, offset, length, sync);
    }

    @Override
    public void barrier() {
        barrier(config.callTimeout());
    }

    @Override
    public void barrier(Duration timeout) {
        Collectives.allReduceSum(this, contexts.context(), 0, timeout, "barrier");
    }

    @Override
    public long allReduceSum(long value) {
        return Collectives.allReduceSum(this, contexts.context(), value, config.callTimeout(), "allReduceSum");
    }

    @Override
    public LocalRegion allocate(long bytes, RemoteAccess access) {
        return parts.memory().allocate(bytes, access);
    }

    @Override
    public RemoteRegion allocateRemote(int rank, long bytes, RemoteAccess access) {
        return parts.memory().allocateRemote(rank, bytes, access);
    }

    @Override
    public void freeRemote(int rank, RemoteRegion region) {
        parts.memory().freeRemote(rank, region);
    }

    @Override
    public void flush() {
        contexts.flushAll();
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        try {
            flush();
            parts.control().shutdown();
        } finally {
            closed = true;
            parts.close();
        }
    }

    @Override
    public String toString() {
        return "Fabric[rank " + rank() + " of " + size() + ", " + threadsPerProcess() + " threads, "
                + transport().kind() + "]";
    }

    // What the parts (and CallReceiver, ReturnCalls, ReturnFuture, MailboxChannelSet) reach through the runtime.
    int threadCount() { return config.job().size() * config.job().threadsPerProcess(); }
    SerializationRegistry registry() { return config.registry(); }
    Transport transport() { return parts.transport(); }
    MailboxChannelSet mailboxes() { return parts.mailboxes(); }
    ReturnCalls returnCalls() { return parts.returns(); }
    ThreadContext threadContext() { return contexts.context(); }
    Link link(int destinationRank) { return parts.links().link(destinationRank); }
    void checkAlive(int destinationRank) { parts.links().checkAlive(destinationRank); }
    boolean isGone(int rank) { return parts.links().isGone(rank); }
    void help() { parts.workers().help(); }
    boolean isClosed() { return closed; }
    void reportError(long sender, Throwable error) { parts.workers().report(sender, error); }
    SendingAgent sendingAgent() { return parts.node().agent(); }
    boolean waitingInOwnCall(ThreadId dest) { return parts.workers().waitingInOwnCall(dest); }
    Fabric view(ChannelFactory factory) { return new FabricView(this, network.addView(factory)); }
    MemorySegment localRegion(long id, long at, long length) { return parts.memory().localRegion(id, at, length); }

    void forwardBroadcast(int root, int relative, int span, MemorySegment record, long offset, long length) {
        parts.broadcasts().forward(root, relative, span, record, offset, length);
    }
}
