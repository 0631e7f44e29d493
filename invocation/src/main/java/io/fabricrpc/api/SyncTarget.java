package io.fabricrpc.api;

/** Something a {@link io.fabricrpc.api.Synchronizer} entry waits on: a progress counter and its peer's liveness. */
public interface SyncTarget {
    /**
     * {@return true once this target's progress has reached {@code mark}} Cheap (acquiring loads), no allocation.
     *
     * @param mark the progress to wait for
     */
    boolean reached(long mark);

    /** Throws {@link io.fabricrpc.api.PeerFailedException} if the peer behind the target is gone. */
    void checkAlive();

    /** The waiting thread's push of what it buffered toward this target (a batch), never waiting for room. */
    default void pushBuffered() {
    }

    /** Lets the waiting thread make progress meanwhile (e.g. run calls addressed to it). */
    default void helpWhileWaiting() {
    }

    /**
     * What is still outstanding toward {@code mark}, for the message of a wait that timed out.
     *
     * @param mark the progress waited for
     * @return a human-readable description of the target and its progress
     */
    String describe(long mark);
}
