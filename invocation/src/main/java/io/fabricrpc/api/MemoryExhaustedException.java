package io.fabricrpc.api;

/** An allocator reached its configured maximum and no memory became free in time; the message gives the sizes. */
public class MemoryExhaustedException extends RuntimeException {
    /**
     * Creates the exception.
     *
     * @param message the request, the configured maximum and why no memory became free
     */
    public MemoryExhaustedException(String message) {
        super(message);
    }
}
