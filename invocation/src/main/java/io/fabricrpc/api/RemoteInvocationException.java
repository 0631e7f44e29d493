package io.fabricrpc.api;

/**
 * Decoded from a failure result record: the remote function threw (or, as {@link ResultTooLargeException}, its
 * result did not fit the return slot). Carries the remote exception's class name and
 * message as text (the remote exception object itself is never deserialized).
 */
public sealed class RemoteInvocationException extends RuntimeException permits ResultTooLargeException {
    private static final long serialVersionUID = 1L;

    /** Binary name of the exception class thrown remotely. */
    private final String remoteClassName;
    /** Message of the remote exception, empty if it had none. */
    private final String remoteMessage;

    /**
     * A remote function threw; the message names the remote exception's class and, if any, its message.
     *
     * @param remoteClassName binary name of the exception class thrown remotely
     * @param remoteMessage message of the remote exception, empty (not null) if it had none
     */
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

    /** {@return the binary name of the exception class thrown remotely} */
    public String remoteClassName() {
        return remoteClassName;
    }

    /**
     * {@return the message of the remote exception, empty if it had none} Possibly truncated to fit the result
     * record.
     */
    public String remoteMessage() {
        return remoteMessage;
    }
}
