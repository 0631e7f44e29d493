package io.fabricrpc.api;

/**
 * A {@code callReturn} result was larger than the largest message a mailbox port carries: the function ran at the
 * destination, but its result could not be sent back. The message names the result's type, the bound and the key
 * that sets it.
 */
public final class ResultTooLargeException extends RemoteInvocationException {
    private static final long serialVersionUID = 1L;

    /**
     * Carries {@code message} as it was written at the destination.
     *
     * @param message the destination's message: the result's type, the bound and the key that sets it
     */
    public ResultTooLargeException(String message) {
        super(message, ResultTooLargeException.class.getName(), message);
    }
}
