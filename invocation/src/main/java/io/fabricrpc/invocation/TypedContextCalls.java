package io.fabricrpc.invocation;

import io.fabricrpc.api.ContextCalls;
import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.RemoteContextConsumer;
import io.fabricrpc.api.RemoteContextFunction;
import io.fabricrpc.api.Synchronizer;
import io.fabricrpc.api.ThreadId;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * {@link ContextCalls} over a fabric or a view of it: one-way calls go through that fabric's channels, calls with
 * a result through the runtime (as {@code callReturn} does for a view). Immutable.
 */
final class TypedContextCalls<C> implements ContextCalls<C> {
    private final Fabric calls;
    private final FabricRuntime runtime;
    private final Class<C> type;

    TypedContextCalls(Fabric calls, FabricRuntime runtime, Class<C> type) {
        this.calls = calls;
        this.runtime = runtime;
        this.type = Objects.requireNonNull(type, "type");
    }

    @Override
    public Class<C> type() {
        return type;
    }

    @Override
    public boolean call(ThreadId dest, RemoteContextConsumer<C> function) {
        return calls.call(dest, function, null);
    }

    @Override
    public boolean call(ThreadId dest, RemoteContextConsumer<C> function, Synchronizer sync) {
        return calls.call(dest, function, sync);
    }

    @Override
    public boolean callSend(ThreadId dest, RemoteContextConsumer<C> function) {
        return calls.callSend(dest, function);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <R> R callReturn(ThreadId dest, RemoteContextFunction<C, R> function) {
        return (R) runtime.callReturnOf(dest, function, runtime.returnCalls().defaultTimeoutNanos());
    }

    @Override
    @SuppressWarnings("unchecked")
    public <R> R callReturn(ThreadId dest, Duration timeout, RemoteContextFunction<C, R> function) {
        return (R) runtime.callReturnOf(dest, function, FabricRuntime.timeoutNanos(timeout));
    }

    @Override
    @SuppressWarnings("unchecked")
    public <R> CompletableFuture<R> callReturnAsync(ThreadId dest, RemoteContextFunction<C, R> function) {
        return (CompletableFuture<R>) runtime.callReturnAsyncOf(dest, function,
                runtime.returnCalls().defaultTimeoutNanos());
    }

    @Override
    @SuppressWarnings("unchecked")
    public <R> CompletableFuture<R> callReturnAsync(ThreadId dest, Duration timeout,
                                                    RemoteContextFunction<C, R> function) {
        return (CompletableFuture<R>) runtime.callReturnAsyncOf(dest, function, FabricRuntime.timeoutNanos(timeout));
    }

    @Override
    public String toString() {
        return "ContextCalls[" + type.getName() + " over " + calls + "]";
    }
}
