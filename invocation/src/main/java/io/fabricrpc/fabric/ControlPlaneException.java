package io.fabricrpc.fabric;

/**
 * The control plane could not do what was asked in time or at all: coordinator unreachable, join or shutdown
 * timeout, protocol violation, I/O failure. The message names the host:port, ranks and durations involved.
 */
public class ControlPlaneException extends RuntimeException {

    public ControlPlaneException(String message) {
        super(message);
    }

    public ControlPlaneException(String message, Throwable cause) {
        super(message, cause);
    }
}
