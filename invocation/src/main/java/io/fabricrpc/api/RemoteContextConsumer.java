package io.fabricrpc.api;

import java.io.Serializable;

/**
 * A task run on another thread or process that receives the destination thread's context object, the per-thread
 * state the fabric gives each receiving thread (for example a worker's local partition of a data structure).
 *
 * <p>Captures follow the rules of {@link RemoteRunnable}. Using the context instead of a static field keeps the
 * receiver-side state explicit and per thread.
 *
 * @param <C> the type of the receiving thread's context; a call fails on a thread whose context has another type
 */
@FunctionalInterface
public interface RemoteContextConsumer<C> extends Serializable {
    /**
     * Runs on the destination thread.
     *
     * @param context the destination thread's context (never shared with other threads by the fabric)
     */
    void accept(C context);
}
