package io.fabricrpc.api;

import java.io.Serializable;

/**
 * A task run on another thread or process ({@code fabric.call(dest, () -> ...)}).
 *
 * <p>Captured variables travel with the call, like C++ lambda captures in Seriema: primitives are copied raw,
 * other objects must be of a class registered with the fabric's serialization registry. Receiver-side state is
 * reached through static fields or the per-thread context the fabric provides, never through captures.
 * The interface is {@link Serializable} only so that javac records the lambda's definition; the fabric does not
 * use Java serialization.
 */
@FunctionalInterface
public interface RemoteRunnable extends Serializable {
    /** Runs on the destination thread. Exceptions thrown here are reported by the receiving fabric. */
    void run();
}
