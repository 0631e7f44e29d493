package io.fabricrpc.fabric;

import io.fabricrpc.api.PeerFailedException;

/**
 * Receives control-plane events. Callbacks run on the control plane's event-loop thread: they must be quick and
 * must not block (hand work to another thread); an exception thrown by a callback is logged and ignored.
 * Each event is delivered at most once per listener; a listener added late is first replayed the departures
 * that already happened.
 */
public interface ControlPlaneListener {

    /** Peer {@code rank} failed (crash, lost connection, missed heartbeats, or the coordinator was lost). */
    default void peerFailed(int rank, PeerFailedException failure) {
    }

    /** Peer {@code rank} left in an orderly way ({@link ControlPlane#close()} without a failure). */
    default void peerLeft(int rank) {
    }

    /** Every rank reached {@link ControlPlane#shutdown()}: the job is ending normally. */
    default void jobShutdown() {
    }

    /** Coordinator only: a join attempt was refused; the coordinator keeps waiting for legitimate members. */
    default void joinRefused(JoinRefusal refusal) {
    }
}
