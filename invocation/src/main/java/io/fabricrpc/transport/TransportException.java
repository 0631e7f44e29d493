package io.fabricrpc.transport;

/** A transport operation failed; the message names the operation and the values involved. */
public class TransportException extends RuntimeException {
    public TransportException(String message) {
        super(message);
    }

    public TransportException(String message, Throwable cause) {
        super(message, cause);
    }
}
