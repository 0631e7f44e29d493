package io.fabricrpc.serialization;

/** Base of the errors raised by the call codec; the message always carries the offending values. */
public class SerializationException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public SerializationException(String message) {
        super(message);
    }

    public SerializationException(String message, Throwable cause) {
        super(message, cause);
    }
}
