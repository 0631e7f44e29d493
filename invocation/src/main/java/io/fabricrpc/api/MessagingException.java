package io.fabricrpc.api;

/** A messenger could not deliver or accept records; the message names the threads, chunk and values. */
public class MessagingException extends RuntimeException {
    /**
     * Creates the exception.
     *
     * @param message what failed, naming the threads, chunk and values
     */
    public MessagingException(String message) {
        super(message);
    }

    /**
     * Creates the exception with its cause.
     *
     * @param message what failed, naming the threads, chunk and values
     * @param cause the failure that caused it
     */
    public MessagingException(String message, Throwable cause) {
        super(message, cause);
    }
}
