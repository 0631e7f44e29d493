package io.fabricrpc.memory;

import java.time.Duration;

/**
 * Shape of a {@link CircularAllocator} or {@link LinearCircularAllocator} ring.
 *
 * @param unitBytes    size of a unit, a positive multiple of 64 (units start cache-line aligned in their slab)
 * @param initialUnits units created up front; also the step of {@link Growth#LINEAR} growth
 * @param maxUnits     the ring never grows past this many units
 * @param growth       how the ring grows when its oldest unit is still in use
 * @param maxWait      how long a blocking allocation waits for the oldest unit's tag to complete once the ring is
 *                     at its maximum (zero: do not wait)
 */
public record RingConfig(int unitBytes, int initialUnits, int maxUnits, Growth growth, Duration maxWait) {
    /** How a ring grows. */
    public enum Growth {
        /** Adds {@code initialUnits} units at a time. */
        LINEAR,
        /** Doubles the number of units. */
        EXPONENTIAL
    }

    public RingConfig {
        if (unitBytes <= 0 || unitBytes % 64 != 0) {
            throw new IllegalArgumentException("unitBytes must be a positive multiple of 64, got " + unitBytes);
        }
        if (initialUnits < 1 || maxUnits < initialUnits) {
            throw new IllegalArgumentException("need 1 <= initialUnits <= maxUnits, got initialUnits " + initialUnits
                    + ", maxUnits " + maxUnits);
        }
        if (growth == null) {
            throw new IllegalArgumentException("growth must be given");
        }
        if (maxWait == null || maxWait.isNegative()) {
            throw new IllegalArgumentException("maxWait must be >= 0, got " + maxWait);
        }
    }

    /** Exponential growth from {@code initialUnits} to {@code maxUnits}, waiting up to one second when full. */
    public static RingConfig of(int unitBytes, int initialUnits, int maxUnits) {
        return new RingConfig(unitBytes, initialUnits, maxUnits, Growth.EXPONENTIAL, Duration.ofSeconds(1));
    }

    public RingConfig withGrowth(Growth newGrowth) {
        return new RingConfig(unitBytes, initialUnits, maxUnits, newGrowth, maxWait);
    }

    public RingConfig withMaxWait(Duration newMaxWait) {
        return new RingConfig(unitBytes, initialUnits, maxUnits, growth, newMaxWait);
    }

    /** The most memory the ring's units can take. */
    public long maxBytes() {
        return (long) unitBytes * maxUnits;
    }
}
