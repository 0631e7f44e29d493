package io.fabricrpc.api;

/**
 * The control plane could not do what was asked in time or at all: coordinator unreachable, join or shutdown
 * timeout, protocol violation, I/O failure. The message names the host:port, ranks and durations involved.
 */
public class ControlPlaneException extends RuntimeException {

    /**
     * Creates the exception.
     *
     * @param message what failed, naming the host:port, ranks and durations involved
     */
    public ControlPlaneException(String message) {
        super(message);
    }

    /**
     * Creates the exception with its cause.
     *
     * @param message what failed, naming the host:port, ranks and durations involved
     * @param cause the failure that caused it (e.g. an I/O error)
     */
    public ControlPlaneException(String message, Throwable cause) {
        super(message, cause);
    }
}
