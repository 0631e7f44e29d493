package io.fabricrpc.invocation;

/** Something a {@link io.fabricrpc.api.Synchronizer} entry waits on: a progress counter and its peer's liveness. */
public interface SyncTarget {
    /** True once this target's progress has reached {@code mark}. Cheap (acquiring loads), no allocation. */
    boolean reached(long mark);

    /** Throws {@link io.fabricrpc.transport.PeerFailedException} if the peer behind the target is gone. */
    void checkAlive();

    /** The waiting thread's push of what it buffered toward this target (a batch), never waiting for room. */
    default void pushBuffered() {
    }

    /** Lets the waiting thread make progress meanwhile (e.g. run calls addressed to it). */
    default void helpWhileWaiting() {
    }

    String describe(long mark);
}
