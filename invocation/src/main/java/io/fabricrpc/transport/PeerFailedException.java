package io.fabricrpc.transport;

/**
 * The peer at the other end of a link died, closed, or stopped answering; every wait on it ends with this.
 * The message says which peer and why (process gone, orderly close, heartbeat silent for how long).
 */
public class PeerFailedException extends TransportException {
    private final String peer;

    public PeerFailedException(String peer, String reason) {
        super("peer " + peer + " failed: " + reason);
        this.peer = peer;
    }

    /** A human-readable identity of the failed peer (transport-specific, e.g. endpoint id and pid). */
    public String peer() {
        return peer;
    }
}
