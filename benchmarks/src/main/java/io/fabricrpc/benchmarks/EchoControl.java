package io.fabricrpc.benchmarks;

/**
 * Runs an echo side between rounds: active only while its own contender is measured, so that two idle echo
 * loops never compete for the CPU with the pair being measured.
 */
interface EchoControl extends AutoCloseable {
    /** Starts polling; returns once the echo side is polling. */
    void activate();

    /** Stops polling (the client has no call in flight); returns once the echo side has stopped. */
    void pause();

    /** Bytes the echo thread has allocated since it started ({@code ThreadMXBean#getThreadAllocatedBytes}). */
    long allocatedBytes();

    @Override
    void close();
}
