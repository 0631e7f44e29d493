package io.fabricrpc.mailbox;

import java.lang.foreign.MemorySegment;

/** Fills a packet in place (no copy): writes at most {@code payload.byteSize()} bytes from offset 0. */
@FunctionalInterface
public interface PacketWriter {
    /** @return the number of payload bytes written */
    long write(MemorySegment payload);
}
