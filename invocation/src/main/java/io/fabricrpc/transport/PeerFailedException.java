package io.fabricrpc.transport;

/**
 * The peer at the other end of a link died, closed, or stopped answering; every wait on it ends with this.
 * The message says which peer and why (process gone, orderly close, heartbeat silent for how long). The fabric's
 * {@link io.fabricrpc.fabric.PeerFailedException} (peers named by rank) is a subclass, so one catch covers both.
 */
public class PeerFailedException extends TransportException {
    private final String peer;

    public PeerFailedException(String peer, String reason) {
        this(peer, "peer " + peer + " failed: " + reason, null);
    }

    /** For subclasses that word the message themselves (the fabric names peers by rank). */
    protected PeerFailedException(String peer, String message, Throwable cause) {
        super(message, cause);
        this.peer = peer;
    }

    /** A human-readable identity of the failed peer (transport-specific, e.g. endpoint id and pid). */
    public String peer() {
        return peer;
    }
}
