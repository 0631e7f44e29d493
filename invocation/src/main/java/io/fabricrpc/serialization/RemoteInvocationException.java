package io.fabricrpc.serialization;

/**
 * Decoded from a failure result record: the remote function threw (or, as {@link ResultTooLargeException}, its
 * result did not fit the return slot). Carries the remote exception's class name and
 * message as text (the remote exception object itself is never deserialized).
 */
public sealed class RemoteInvocationException extends RuntimeException permits ResultTooLargeException {
    private static final long serialVersionUID = 1L;

    private final String remoteClassName;
    private final String remoteMessage;

    public RemoteInvocationException(String remoteClassName, String remoteMessage) {
        this("remote function threw " + remoteClassName + (remoteMessage.isEmpty() ? "" : ": " + remoteMessage),
                remoteClassName, remoteMessage);
    }

    /** For failures of the call itself rather than of the function, which say what happened in their own words. */
    RemoteInvocationException(String message, String remoteClassName, String remoteMessage) {
        super(message);
        this.remoteClassName = remoteClassName;
        this.remoteMessage = remoteMessage;
    }

    /** Binary name of the exception class thrown remotely. */
    public String remoteClassName() {
        return remoteClassName;
    }

    /** Message of the remote exception, empty if it had none (possibly truncated to fit the result record). */
    public String remoteMessage() {
        return remoteMessage;
    }
}
