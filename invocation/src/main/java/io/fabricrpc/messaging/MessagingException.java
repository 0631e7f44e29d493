package io.fabricrpc.messaging;

/** A messenger could not deliver or accept records; the message names the threads, chunk and values. */
public class MessagingException extends RuntimeException {
    public MessagingException(String message) {
        super(message);
    }

    public MessagingException(String message, Throwable cause) {
        super(message, cause);
    }
}
