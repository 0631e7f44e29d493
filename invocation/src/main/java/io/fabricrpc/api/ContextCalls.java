package io.fabricrpc.api;


import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * The call primitives for functions of the destination thread's context object, typed once: obtained from
 * {@link Fabric#context(Class)}, its methods take lambdas of {@code C} with no cast at the call site
 * ({@code shards.call(dest, s -> s.put(k, v))}). Each call goes through the fabric (or view) it came from.
 *
 * <p>A call whose destination has no context, or one that is not a {@code C}, does not run: it fails with a
 * {@link io.fabricrpc.serialization.WrongContextException} naming the expected type and the destination, which
 * {@link #callReturn} and {@link #callReturnAsync} report to the caller (as a
 * {@link io.fabricrpc.api.RemoteInvocationException}) and one-way calls to the destination's
 * {@link Fabric#onError} listener.
 *
 * @param <C> the type of the destination threads' context objects (given to {@link Fabric#attach(int, Object)})
 */
public interface ContextCalls<C> {
    /**
     * The context type these calls expect.
     *
     * @return the class given to {@link Fabric#context(Class)}
     */
    Class<C> type();

    /**
     * {@link Fabric#call(ThreadId, RemoteContextConsumer, Synchronizer)} with no synchronizer.
     *
     * @param dest the worker thread that runs it
     * @param function the lambda of the destination's context; its captured values are the message
     * @return false only if the destination's buffers are full and the messenger's policy is FAIL
     */
    boolean call(ThreadId dest, RemoteContextConsumer<C> function);

    /**
     * {@link Fabric#call(ThreadId, RemoteContextConsumer, Synchronizer)}.
     *
     * @param dest the worker thread that runs it
     * @param function the lambda of the destination's context; its captured values are the message
     * @param sync counts the call down (SENT or CONSUMED); may be null
     * @return false only if the destination's buffers are full and the messenger's policy is FAIL
     */
    boolean call(ThreadId dest, RemoteContextConsumer<C> function, Synchronizer sync);

    /**
     * {@link Fabric#callSend(ThreadId, RemoteContextConsumer)}.
     *
     * @param dest the worker thread that runs it
     * @param function the lambda of the destination's context; its captured values are the message
     * @return true once the message is queued at the destination
     */
    boolean callSend(ThreadId dest, RemoteContextConsumer<C> function);

    /**
     * As {@link Fabric#callReturn}, for a function of the destination thread's context.
     *
     * @param <R> the result type
     * @param dest the worker thread that runs it
     * @param function the lambda of the destination's context; its captured values are the message
     * @return the function's result
     */
    <R> R callReturn(ThreadId dest, RemoteContextFunction<C, R> function);

    /**
     * As {@link Fabric#callReturnAsync}, for a function of the destination thread's context.
     *
     * @param <R> the result type
     * @param dest the worker thread that runs it
     * @param function the lambda of the destination's context; its captured values are the message
     * @return a future of the function's result
     */
    <R> CompletableFuture<R> callReturnAsync(ThreadId dest, RemoteContextFunction<C, R> function);

    /**
     * As {@link Fabric#callReturn(ThreadId, Duration, RemoteSupplier)}, for a function of the destination's context.
     *
     * @param <R> the result type
     * @param dest the worker thread that runs it
     * @param timeout how long the call may take, from now
     * @param function the lambda of the destination's context; its captured values are the message
     * @return the function's result
     */
    <R> R callReturn(ThreadId dest, Duration timeout, RemoteContextFunction<C, R> function);

    /**
     * As {@link Fabric#callReturnAsync(ThreadId, Duration, RemoteSupplier)}, for a function of the destination's
     * context.
     *
     * @param <R> the result type
     * @param dest the worker thread that runs it
     * @param timeout how long the call may take, from now
     * @param function the lambda of the destination's context; its captured values are the message
     * @return a future of the function's result
     */
    <R> CompletableFuture<R> callReturnAsync(ThreadId dest, Duration timeout, RemoteContextFunction<C, R> function);
}
