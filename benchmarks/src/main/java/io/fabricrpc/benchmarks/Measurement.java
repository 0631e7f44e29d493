package io.fabricrpc.benchmarks;

/**
 * One contender's measured round: RTT percentiles in nanoseconds, calls completed in {@code elapsedNanos}, and
 * the bytes the client thread and the echo thread allocated during the round.
 */
record Measurement(int round, long p50Nanos, long p99Nanos, long maxNanos, long calls, long elapsedNanos,
                   long clientBytes, long echoBytes) {
    double callsPerSecond() {
        return calls * 1e9 / elapsedNanos;
    }
}
