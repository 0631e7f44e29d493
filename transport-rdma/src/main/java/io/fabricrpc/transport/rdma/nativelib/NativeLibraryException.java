package io.fabricrpc.transport.rdma.nativelib;

/**
 * The native RDMA stack cannot be used in this JVM; the message says what to install or change.
 * Unchecked because it reports a broken deployment, not a condition a caller can recover from.
 */
public final class NativeLibraryException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public NativeLibraryException(String message) {
        super(message);
    }

    public NativeLibraryException(String message, Throwable cause) {
        super(message, cause);
    }
}
