package io.fabricrpc.api;

/**
 * A peer refused a remote allocation or free (over its limit, allocation failed there, unknown region); the
 * message names the peer, the request and the peer's reason with its numbers.
 */
public class RemoteAllocationException extends RuntimeException {
    /**
     * Creates the exception.
     *
     * @param message the peer, the request and the peer's reason with its numbers
     */
    public RemoteAllocationException(String message) {
        super(message);
    }
}
