package io.fabricrpc.fabric;

/**
 * A peer process is gone: it crashed, stopped answering heartbeats, or left the job, so nothing waiting on it can
 * complete. Thrown by {@link ControlPlane#checkAlive(int)} and by fabric waits that involve the peer.
 *
 * <p>{@link #isOrderlyDeparture()} distinguishes a peer that left in an orderly way ({@link ControlPlane#close()}
 * or {@link ControlPlane#shutdown()}) from a failure; both end every wait on the peer.
 */
public class PeerFailedException extends io.fabricrpc.transport.PeerFailedException {

    private final int rank;
    private final String reason;
    private final boolean orderly;

    /** Creates the exception for {@code rank} with a human-readable {@code reason}. */
    public PeerFailedException(int rank, String reason, boolean orderly) {
        super("rank " + rank, message(rank, reason, orderly), null);
        this.rank = rank;
        this.reason = reason;
        this.orderly = orderly;
    }

    /** Creates the exception with the exception that revealed the failure. */
    public PeerFailedException(int rank, String reason, boolean orderly, Throwable cause) {
        super("rank " + rank, message(rank, reason, orderly), cause);
        this.rank = rank;
        this.reason = reason;
        this.orderly = orderly;
    }

    private static String message(int rank, String reason, boolean orderly) {
        return (orderly ? "peer rank " + rank + " left the job: " : "peer rank " + rank + " failed: ") + reason;
    }

    /** Rank of the peer that is gone. */
    public int rank() {
        return rank;
    }

    /** Why the peer is gone, without the rank prefix. */
    public String reason() {
        return reason;
    }

    /** True if the peer left in an orderly way (close or shutdown) rather than failing. */
    public boolean isOrderlyDeparture() {
        return orderly;
    }
}
