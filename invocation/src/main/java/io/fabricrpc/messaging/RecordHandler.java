package io.fabricrpc.messaging;

import java.lang.foreign.MemorySegment;

/** Consumes one received record in place; the bytes are valid only during the call. */
@FunctionalInterface
public interface RecordHandler {
    /**
     * @param sender  the sending thread's id
     * @param record  memory holding the payload at {@code offset}
     * @param length  payload length
     */
    void onRecord(long sender, MemorySegment record, long offset, long length);
}
