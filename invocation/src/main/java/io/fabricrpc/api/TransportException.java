package io.fabricrpc.api;

/** A transport operation failed; the message names the operation and the values involved. */
public class TransportException extends RuntimeException {
    /**
     * Creates the exception.
     *
     * @param message what failed, naming the operation and the values involved
     */
    public TransportException(String message) {
        super(message);
    }

    /**
     * Creates the exception with its cause.
     *
     * @param message what failed, naming the operation and the values involved
     * @param cause the failure that caused it
     */
    public TransportException(String message, Throwable cause) {
        super(message, cause);
    }
}
