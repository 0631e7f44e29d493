package io.fabricrpc.mailbox;

import java.lang.foreign.MemorySegment;

/** Reads a received message in place; the segment is valid only during the call. */
@FunctionalInterface
public interface PacketReader {
    /** @param message the received bytes are {@code [0, length)} of this segment */
    void read(MemorySegment message, long length);
}
