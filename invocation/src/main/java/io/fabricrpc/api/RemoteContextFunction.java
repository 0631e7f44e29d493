package io.fabricrpc.api;

import java.io.Serializable;

/**
 * A function of the destination thread's context object whose result is sent back to the caller
 * ({@code fabric.context(Shard.class).callReturn(dest, shard -> shard.get(key))}).
 *
 * <p>Captures follow the rules of {@link RemoteRunnable}; the result those of {@link RemoteSupplier}.
 *
 * @param <C> the type of the receiving thread's context; a call fails on a thread whose context has another type
 * @param <R> the result type
 */
@FunctionalInterface
public interface RemoteContextFunction<C, R> extends Serializable {
    /**
     * Runs on the destination thread with its context; the returned value is delivered to the caller.
     *
     * @param context the destination thread's context object
     * @return the result: null, a primitive box, a String or an instance of a registered class
     */
    R apply(C context);
}
