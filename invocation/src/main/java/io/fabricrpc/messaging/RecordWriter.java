package io.fabricrpc.messaging;

import java.lang.foreign.MemorySegment;

/** Serializes one call straight into sendable memory (no intermediate copy). */
@FunctionalInterface
public interface RecordWriter {
    /**
     * Writes the record's payload into {@code target} at {@code offset}, using at most {@code limit} bytes.
     *
     * @return the number of bytes written, or -1 if the record does not fit in {@code limit} (nothing counts as
     *         written then; the messenger retries in a fresh chunk)
     */
    long write(MemorySegment target, long offset, long limit);
}
