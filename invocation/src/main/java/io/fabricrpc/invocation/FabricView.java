package io.fabricrpc.invocation;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.RemoteBufferConsumer;
import io.fabricrpc.api.RemoteContextConsumer;
import io.fabricrpc.api.RemoteRunnable;
import io.fabricrpc.api.RemoteSupplier;
import io.fabricrpc.api.Synchronizer;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.Collection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.function.BiConsumer;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/**
 * The same fabric, with the one-sided call primitives going through another kind of channel (e.g. aggregators),
 * so an application switches with one line. Send-based calls and broadcasts use the plain paths; everything else
 * is the underlying fabric's.
 */
public final class FabricView implements Fabric {
    private final FabricRuntime runtime;
    private final int view;

    FabricView(FabricRuntime runtime, int view) {
        this.runtime = runtime;
        this.view = view;
    }

    private <T> T inView(Supplier<T> call) {
        Routes routes = runtime.threadContext();
        int previous = routes.enterView(view);
        try {
            return call.get();
        } finally {
            routes.enterView(previous);
        }
    }

    @Override
    public boolean call(ThreadId dest, RemoteRunnable function) {
        return runtime.callInView(view, dest, function, null); // not through call(..., null): one inlining level fewer
    }

    @Override
    public boolean call(ThreadId dest, RemoteRunnable function, Synchronizer sync) {
        return runtime.callInView(view, dest, function, sync); // no lambda here: this is the hot path
    }

    @Override
    public boolean call(ThreadId dest, RemoteContextConsumer<?> function, Synchronizer sync) {
        return runtime.callInView(view, dest, function, sync);
    }

    @Override
    public boolean callBuffer(ThreadId dest, RemoteBufferConsumer function, MemorySegment buffer, long offset,
                              long length, Synchronizer sync) {
        return inView(() -> runtime.callBuffer(dest, function, buffer, offset, length, sync));
    }

    @Override
    public boolean callBuffer(ThreadId dest, RemoteBufferConsumer function, LocalRegion source, long sourceOffset,
                              RemoteRegion destination, long destinationOffset, long length, Synchronizer sync) {
        return inView(() -> runtime.callBuffer(dest, function, source, sourceOffset, destination, destinationOffset,
                length, sync));
    }

    @Override
    public boolean callBuffer(ThreadId dest, RemoteBufferConsumer function, RemoteRegion source, long offset,
                              long length, Synchronizer sync) {
        return inView(() -> runtime.callBuffer(dest, function, source, offset, length, sync));
    }

    @Override
    public <R> R callReturn(ThreadId dest, RemoteSupplier<R> function) {
        return inView(() -> runtime.callReturn(dest, function));
    }

    @Override
    public <R> CompletableFuture<R> callReturnAsync(ThreadId dest, RemoteSupplier<R> function) {
        return inView(() -> runtime.callReturnAsync(dest, function));
    }

    @Override
    public <R> R callReturn(ThreadId dest, Duration timeout, RemoteSupplier<R> function) {
        return inView(() -> runtime.callReturn(dest, timeout, function));
    }

    @Override
    public <R> CompletableFuture<R> callReturnAsync(ThreadId dest, Duration timeout, RemoteSupplier<R> function) {
        return inView(() -> runtime.callReturnAsync(dest, timeout, function));
    }

    @Override
    public void awaitAll(Duration timeout, Collection<? extends Future<?>> futures) {
        runtime.awaitAll(timeout, futures);
    }

    @Override
    public void awaitAll(Collection<? extends Future<?>> futures) {
        runtime.awaitAll(futures);
    }

    // ---- everything below is the underlying fabric's ----

    @Override
    public int rank() {
        return runtime.rank();
    }

    @Override
    public int size() {
        return runtime.size();
    }

    @Override
    public int threadsPerProcess() {
        return runtime.threadsPerProcess();
    }

    @Override
    public void attach(int index) {
        runtime.attach(index);
    }

    @Override
    public void attach(int index, Object context) {
        runtime.attach(index, context);
    }

    @Override
    public ThreadId self() {
        return runtime.self();
    }

    @Override
    public int processCalls() {
        return runtime.processCalls();
    }

    @Override
    public void startHandlerThreads() {
        runtime.startHandlerThreads();
    }

    @Override
    public boolean callSend(ThreadId dest, RemoteRunnable function) {
        return runtime.callSend(dest, function);
    }

    @Override
    public boolean callSend(ThreadId dest, RemoteContextConsumer<?> function) {
        return runtime.callSend(dest, function);
    }

    @Override
    public void broadcast(RemoteRunnable function, Synchronizer sync) {
        runtime.broadcast(function, sync);
    }

    @Override
    public void broadcastBuffer(RemoteBufferConsumer function, MemorySegment buffer, long offset, long length,
                                Synchronizer sync) {
        runtime.broadcastBuffer(function, buffer, offset, length, sync);
    }

    @Override
    public void broadcastBuffer(RemoteBufferConsumer function, LocalRegion source, long sourceOffset,
                                IntFunction<RemoteRegion> destinations, long destinationOffset, long length,
                                Synchronizer sync) {
        runtime.broadcastBuffer(function, source, sourceOffset, destinations, destinationOffset, length, sync);
    }

    @Override
    public void broadcastBuffer(RemoteBufferConsumer function, RemoteRegion source, long offset, long length,
                                Synchronizer sync) {
        runtime.broadcastBuffer(function, source, offset, length, sync);
    }

    @Override
    public LocalRegion allocate(long bytes, RemoteAccess access) {
        return runtime.allocate(bytes, access);
    }

    @Override
    public void onError(BiConsumer<ThreadId, Throwable> listener) {
        runtime.onError(listener);
    }

    /** Sends what this thread's channels of this view hold. */
    @Override
    public void flush() {
        runtime.threadContext().flushView(view);
    }

    /** Flushes this thread's channels of this view and sends each destination a shutdown signal. */
    void shutdownChannels() {
        runtime.threadContext().shutdownView(view);
    }

    /** Bytes the calling thread's channels of this view hold locally. */
    long bufferedBytes() {
        return runtime.threadContext().bufferedBytes(view);
    }

    FabricRuntime runtime() {
        return runtime;
    }

    /** Closing a view closes the fabric (it is the same job). */
    @Override
    public void close() {
        runtime.close();
    }

    @Override
    public String toString() {
        return runtime + " view " + view;
    }

    @Override
    public RemoteRegion allocateRemote(int rank, long bytes, RemoteAccess access) {
        return runtime.allocateRemote(rank, bytes, access);
    }

    @Override
    public void freeRemote(int rank, RemoteRegion region) {
        runtime.freeRemote(rank, region);
    }

    @Override
    public void barrier() {
        runtime.barrier();
    }

    @Override
    public void barrier(java.time.Duration timeout) {
        runtime.barrier(timeout);
    }

    @Override
    public long allReduceSum(long value) {
        return runtime.allReduceSum(value);
    }

    @Override
    public <C> io.fabricrpc.api.ContextCalls<C> context(Class<C> type) {
        return new TypedContextCalls<>(this, runtime, type);
    }
}
