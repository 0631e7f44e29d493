package io.fabricrpc.serialization;

/**
 * Decoded from a failure result record: the remote function threw. Carries the remote exception's class name and
 * message as text (the remote exception object itself is never deserialized).
 */
public final class RemoteInvocationException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String remoteClassName;
    private final String remoteMessage;

    public RemoteInvocationException(String remoteClassName, String remoteMessage) {
        super("remote function threw " + remoteClassName + (remoteMessage.isEmpty() ? "" : ": " + remoteMessage));
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
