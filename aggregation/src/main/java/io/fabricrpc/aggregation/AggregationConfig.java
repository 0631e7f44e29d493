package io.fabricrpc.aggregation;

import java.time.Duration;

/**
 * Aggregation settings.
 *
 * @param mode            TRADITIONAL (batch everything) or OVERFLOW (batch only what the messenger cannot take)
 * @param batchBytes      TRADITIONAL: a batch is sent once it holds this many bytes (Seriema: 4 KiB)
 * @param maxDelay        no call waits longer than this after it was made before its batch (or, in OVERFLOW, its
 *                        exceeding calls) is pushed out, even when the sender goes idle. The agent looks every
 *                        200 us (as the OS timer allows), so TRADITIONAL pushes a batch out at most maxDelay and at
 *                        least maxDelay - 400 us after its first call (a maxDelay under 400 us acts as 400 us), and
 *                        OVERFLOW between maxDelay and maxDelay + 200 us
 * @param exceedingLimit  OVERFLOW: bytes of exceeding calls held locally at most
 * @param onLimit         OVERFLOW: what a call does when the exceeding calls reach the limit
 */
public record AggregationConfig(Mode mode, int batchBytes, Duration maxDelay, long exceedingLimit, LimitPolicy onLimit) {
    public enum Mode { TRADITIONAL, OVERFLOW }

    /** What an OVERFLOW call does when the exceeding calls already fill {@code exceedingLimit}. */
    public enum LimitPolicy {
        /** The call returns false: nothing is sent. */
        FAIL,
        /** The call waits (bounded by the messenger timeout and the peer's liveness) until room returns. */
        BLOCK
    }

    public AggregationConfig {
        if (batchBytes < 64) {
            throw new IllegalArgumentException("batchBytes must be >= 64, got " + batchBytes);
        }
        if (maxDelay.isNegative() || maxDelay.isZero()) {
            throw new IllegalArgumentException("maxDelay must be positive, got " + maxDelay);
        }
        if (exceedingLimit < 4096) {
            throw new IllegalArgumentException("exceedingLimit must be >= 4096 bytes, got " + exceedingLimit);
        }
    }

    /** Seriema's traditional mode: 4 KiB batches, flushed after 1 ms at the latest. */
    public static AggregationConfig traditional() {
        return new AggregationConfig(Mode.TRADITIONAL, 4096, Duration.ofMillis(1), 16 << 20, LimitPolicy.BLOCK);
    }

    /** Seriema's overflow mode: direct while there is room, 16 MiB of exceeding calls at most, then block. */
    public static AggregationConfig overflow() {
        return new AggregationConfig(Mode.OVERFLOW, 4096, Duration.ofMillis(1), 16 << 20, LimitPolicy.BLOCK);
    }

    public AggregationConfig withBatchBytes(int bytes) {
        return new AggregationConfig(mode, bytes, maxDelay, exceedingLimit, onLimit);
    }

    public AggregationConfig withMaxDelay(Duration delay) {
        return new AggregationConfig(mode, batchBytes, delay, exceedingLimit, onLimit);
    }

    public AggregationConfig withExceedingLimit(long bytes, LimitPolicy policy) {
        return new AggregationConfig(mode, batchBytes, maxDelay, bytes, policy);
    }
}
