package io.fabricrpc.api;

import java.io.Serializable;

/**
 * A function run on another thread or process whose result is sent back to the caller
 * ({@code fabric.callReturn(dest, () -> ...)}).
 *
 * <p>Captures follow the rules of {@link RemoteRunnable}. The result must be {@code null}, a primitive box,
 * a {@link String} or an instance of a registered class.
 *
 * @param <R> the result type
 */
@FunctionalInterface
public interface RemoteSupplier<R> extends Serializable {
    /**
     * Runs on the destination thread; the returned value is encoded and delivered to the caller.
     *
     * @return the result: null, a primitive box, a String or an instance of a registered class
     */
    R get();
}
