package io.fabricrpc.messaging;

import java.lang.foreign.MemorySegment;

/** Consumes one received record in place; the bytes are valid only during the call. */
@FunctionalInterface
public interface RecordHandler {
    /**
     * @param sender  the sending thread's id
     * @param tag     the application tag the sender gave the record (0..127)
     * @param record  memory holding the payload at {@code offset}
     * @param length  payload length
     */
    void onRecord(long sender, int tag, MemorySegment record, long offset, long length);
}
