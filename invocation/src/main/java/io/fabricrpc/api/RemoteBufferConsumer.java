package io.fabricrpc.api;

import java.io.Serializable;
import java.lang.foreign.MemorySegment;

/**
 * A task run on another thread or process once a buffer has been fully written at the destination
 * ({@code fabric.callBuffer(dest, buffer, (received) -> ...)}), as Seriema's {@code call_buffer}.
 *
 * <p>Captures follow the rules of {@link RemoteRunnable}.
 */
@FunctionalInterface
public interface RemoteBufferConsumer extends Serializable {
    /**
     * Runs on the destination thread.
     *
     * @param buffer the received bytes; valid only for the duration of this call (the fabric recycles the memory
     *               afterwards), so copy what must outlive it
     */
    void accept(MemorySegment buffer);
}
