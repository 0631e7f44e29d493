package io.fabricrpc.mcts;

import java.time.Duration;

/**
 * The few settings of a search (Seriema §5.3 defaults in {@link #defaults()}). Phases hold up to
 * {@code phaseRolloutsPerThread · n} rollouts (n = worker threads of the job) and at most
 * {@code inFlightPerThread · n} rollouts are in flight; the search stops at the first phase boundary past
 * {@code rollouts} or {@code timeLimit}. {@code timeout} bounds every wait (a stalled search fails with its numbers).
 */
public record MctsSettings(int playouts, double exploration, int phaseRolloutsPerThread, int inFlightPerThread,
                           long rollouts, Duration timeLimit, long seed, Mode mode, Duration timeout) {
    /** How the tree's calls travel: through a {@code trad} or {@code ovfl} aggregating view, or unaggregated. */
    public enum Mode { TRAD, OVFL, DIRECT }

    public MctsSettings {
        if (playouts < 1 || exploration < 0 || phaseRolloutsPerThread < 1 || inFlightPerThread < 1 || rollouts < 1) {
            throw new IllegalArgumentException("playouts, phase, in-flight and rollouts must be positive and C >= 0: "
                    + playouts + ", " + phaseRolloutsPerThread + ", " + inFlightPerThread + ", " + rollouts + ", "
                    + exploration);
        }
    }

    /** 16 playouts per simulation, C = 1.0, phases of 4096·n, batches of 128·n in flight, trad aggregation. */
    public static MctsSettings defaults() {
        return new MctsSettings(16, 1.0, 4096, 128, 1_000_000, Duration.ofSeconds(10), 1, Mode.TRAD,
                Duration.ofSeconds(120));
    }

    public MctsSettings withPlayouts(int n) {
        return new MctsSettings(n, exploration, phaseRolloutsPerThread, inFlightPerThread, rollouts, timeLimit, seed, mode, timeout);
    }

    public MctsSettings withExploration(double c) {
        return new MctsSettings(playouts, c, phaseRolloutsPerThread, inFlightPerThread, rollouts, timeLimit, seed, mode, timeout);
    }

    public MctsSettings withPhaseRolloutsPerThread(int n) {
        return new MctsSettings(playouts, exploration, n, inFlightPerThread, rollouts, timeLimit, seed, mode, timeout);
    }

    public MctsSettings withInFlightPerThread(int n) {
        return new MctsSettings(playouts, exploration, phaseRolloutsPerThread, n, rollouts, timeLimit, seed, mode, timeout);
    }

    public MctsSettings withRollouts(long n) {
        return new MctsSettings(playouts, exploration, phaseRolloutsPerThread, inFlightPerThread, n, timeLimit, seed, mode, timeout);
    }

    public MctsSettings withTimeLimit(Duration d) {
        return new MctsSettings(playouts, exploration, phaseRolloutsPerThread, inFlightPerThread, rollouts, d, seed, mode, timeout);
    }

    public MctsSettings withSeed(long s) {
        return new MctsSettings(playouts, exploration, phaseRolloutsPerThread, inFlightPerThread, rollouts, timeLimit, s, mode, timeout);
    }

    public MctsSettings withMode(Mode m) {
        return new MctsSettings(playouts, exploration, phaseRolloutsPerThread, inFlightPerThread, rollouts, timeLimit, seed, m, timeout);
    }

    public MctsSettings withTimeout(Duration d) {
        return new MctsSettings(playouts, exploration, phaseRolloutsPerThread, inFlightPerThread, rollouts, timeLimit, seed, mode, d);
    }

    /** Seed of a node's expansion order or playouts: a function of the search seed and where the node lives. */
    public static long nodeSeed(long seed, long location, int purpose) {
        long z = seed + location * 0x9E3779B97F4A7C15L + purpose * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
