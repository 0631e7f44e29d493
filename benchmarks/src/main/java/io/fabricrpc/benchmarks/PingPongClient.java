package io.fabricrpc.benchmarks;

/**
 * The calling side of a ping-pong: one {@link #call} is one synchronous round trip of the configured payload.
 * Used by one thread.
 */
interface PingPongClient extends AutoCloseable {
    /**
     * Sends the payload (its first 8 bytes carry {@code sequence} when it has 8 bytes or more), waits for the echo
     * and checks it.
     *
     * @throws IllegalStateException if the echo has the wrong length or sequence, or does not come within the
     *                               reply timeout
     */
    void call(long sequence);

    @Override
    void close();
}
