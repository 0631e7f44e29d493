package io.fabricrpc.api;

/**
 * A peer is gone: its process died, it closed or left the job, it stopped answering heartbeats, or the job declared
 * it failed (fenced). Every wait that involves the peer ends with this, and calls to it are refused.
 *
 * <p>The fabric names peers by {@link #rank()}; a transport that knows only its link names the peer by
 * {@link #peer()} (endpoint id, pid) and reports rank -1. {@link #isOrderlyDeparture()} tells an orderly departure
 * ({@code close} or {@code shutdown} of the peer) from a failure; both end every wait on the peer.
 */
public class PeerFailedException extends RuntimeException {
    /** Human-readable identity of the peer. */
    private final String peer;
    /** Rank of the peer, or -1 when only a transport link knows it. */
    private final int rank;
    /** Why the peer is gone, without the peer prefix. */
    private final String reason;
    /** True for an orderly departure (close or shutdown), false for a failure. */
    private final boolean orderly;

    /**
     * A peer known only to a transport: {@code peer} is its human-readable identity.
     *
     * @param peer the peer's identity, e.g. its endpoint id and pid
     * @param reason why the peer is gone
     */
    public PeerFailedException(String peer, String reason) {
        this(peer, reason, (Throwable) null);
    }

    /**
     * A peer known only to a transport, with the exception that revealed the failure.
     *
     * @param peer the peer's identity, e.g. its endpoint id and pid
     * @param reason why the peer is gone
     * @param cause the exception that revealed the failure, or null
     */
    public PeerFailedException(String peer, String reason, Throwable cause) {
        super("peer " + peer + " failed: " + reason, cause);
        this.peer = peer;
        this.rank = -1;
        this.reason = reason;
        this.orderly = false;
    }

    /**
     * Rank {@code rank} of the job is gone, for {@code reason}.
     *
     * @param rank the peer's rank in the job
     * @param reason why the peer is gone
     * @param orderly true if it left in an orderly way (close or shutdown), false if it failed
     */
    public PeerFailedException(int rank, String reason, boolean orderly) {
        this(rank, reason, orderly, null);
    }

    /**
     * Rank {@code rank} of the job is gone, with the exception that revealed it.
     *
     * @param rank the peer's rank in the job
     * @param reason why the peer is gone
     * @param orderly true if it left in an orderly way (close or shutdown), false if it failed
     * @param cause the exception that revealed the departure or failure, or null
     */
    public PeerFailedException(int rank, String reason, boolean orderly, Throwable cause) {
        super((orderly ? "peer rank " + rank + " left the job: " : "peer rank " + rank + " failed: ") + reason, cause);
        this.peer = "rank " + rank;
        this.rank = rank;
        this.reason = reason;
        this.orderly = orderly;
    }

    /** {@return a human-readable identity of the peer ("rank 3", or a transport's endpoint id and pid)} */
    public String peer() {
        return peer;
    }

    /** {@return the rank of the peer, or -1 when only a transport link knows it} */
    public int rank() {
        return rank;
    }

    /** {@return why the peer is gone, without the peer prefix} */
    public String reason() {
        return reason;
    }

    /** {@return true if the peer left in an orderly way (close or shutdown) rather than failing} */
    public boolean isOrderlyDeparture() {
        return orderly;
    }
}
