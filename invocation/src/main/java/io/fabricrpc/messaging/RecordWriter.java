package io.fabricrpc.messaging;

import java.lang.foreign.MemorySegment;

/** Serializes one call straight into sendable memory (no intermediate copy). */
@FunctionalInterface
public interface RecordWriter {
    /**
     * Writes the record's payload into {@code target} at {@code offset}, using at most {@code limit} bytes.
     *
     * <p>When it returns a length, every byte of {@code [offset + length, offset + limit)} that was zero is zero
     * again: in a mapped chunk the receiver may read the next header there as soon as this record is published.
     *
     * @return the number of bytes written, or -1 if the record does not fit in {@code limit} (nothing counts as
     *         written then; the messenger retries in a fresh chunk)
     */
    long write(MemorySegment target, long offset, long limit);

    /**
     * The length {@link #write} would return, if this writer knows it without writing (a repeat call of a function
     * whose record has a constant length); -1 otherwise. Lets a messenger check the room first and write in place
     * with {@link #writeKnown}.
     */
    default int knownLength() {
        return -1;
    }

    /** Writes the record of {@link #knownLength()} bytes (positive) at {@code offset}, where there is room for it. */
    default void writeKnown(MemorySegment target, long offset) {
        throw new UnsupportedOperationException("no known length");
    }
}
