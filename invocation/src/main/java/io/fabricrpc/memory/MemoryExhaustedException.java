package io.fabricrpc.memory;

/** An allocator reached its configured maximum and no memory became free in time; the message gives the sizes. */
public class MemoryExhaustedException extends RuntimeException {
    public MemoryExhaustedException(String message) {
        super(message);
    }
}
