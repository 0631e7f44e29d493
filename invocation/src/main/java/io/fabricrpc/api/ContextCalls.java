package io.fabricrpc.api;

import io.fabricrpc.fabric.ThreadId;

import java.util.concurrent.CompletableFuture;

/**
 * The call primitives for functions of the destination thread's context object, typed once: obtained from
 * {@link Fabric#context(Class)}, its methods take lambdas of {@code C} with no cast at the call site
 * ({@code shards.call(dest, s -> s.put(k, v))}). Each call goes through the fabric (or view) it came from.
 *
 * <p>A call whose destination has no context, or one that is not a {@code C}, does not run: it fails with a
 * {@link io.fabricrpc.serialization.WrongContextException} naming the expected type and the destination, which
 * {@link #callReturn} and {@link #callReturnAsync} report to the caller (as a
 * {@link io.fabricrpc.serialization.RemoteInvocationException}) and one-way calls to the destination's
 * {@link Fabric#onError} listener.
 *
 * @param <C> the type of the destination threads' context objects (given to {@link Fabric#attach(int, Object)})
 */
public interface ContextCalls<C> {
    /** The context type these calls expect. */
    Class<C> type();

    /** {@link Fabric#call(ThreadId, RemoteContextConsumer, Synchronizer)} with no synchronizer. */
    boolean call(ThreadId dest, RemoteContextConsumer<C> function);

    /** {@link Fabric#call(ThreadId, RemoteContextConsumer, Synchronizer)}. */
    boolean call(ThreadId dest, RemoteContextConsumer<C> function, Synchronizer sync);

    /** {@link Fabric#callSend(ThreadId, RemoteContextConsumer)}. */
    boolean callSend(ThreadId dest, RemoteContextConsumer<C> function);

    /** As {@link Fabric#callReturn}, for a function of the destination thread's context. */
    <R> R callReturn(ThreadId dest, RemoteContextFunction<C, R> function);

    /** As {@link Fabric#callReturnAsync}, for a function of the destination thread's context. */
    <R> CompletableFuture<R> callReturnAsync(ThreadId dest, RemoteContextFunction<C, R> function);
}
