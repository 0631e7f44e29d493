package io.fabricrpc.benchmarks;

import java.util.Arrays;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * The rounds of one placement: {@code mailbox.get(i)} and {@code agrona.get(i)} ran back to back in round i
 * ({@code mailboxFirst.get(i)} says in which order). Ratios are mailbox / Agrona, per round, then the median.
 */
record PlacementResult(String placement, Idle idle, List<Measurement> mailbox, List<Measurement> agrona,
                       List<Boolean> mailboxFirst) {
    PlacementResult {
        if (mailbox.size() != agrona.size() || mailbox.size() != mailboxFirst.size() || mailbox.isEmpty()) {
            throw new IllegalArgumentException("unpaired rounds: " + mailbox.size() + " mailbox, " + agrona.size()
                    + " Agrona, " + mailboxFirst.size() + " orders");
        }
    }

    /** The placement and the idle strategy, e.g. "cross-process (two JVMs), idle backoff". */
    String label() {
        return placement + ", idle " + idle.name().toLowerCase();
    }

    boolean crossProcess() {
        return placement.startsWith("cross");
    }

    double p50Ratio() {
        return medianRatio(m -> m.p50Nanos());
    }

    double p99Ratio() {
        return medianRatio(m -> m.p99Nanos());
    }

    double throughputRatio() {
        return medianRatio(Measurement::callsPerSecond);
    }

    double[] ratios(ToDoubleFunction<Measurement> metric) {
        double[] ratios = new double[mailbox.size()];
        for (int i = 0; i < ratios.length; i++) {
            ratios[i] = metric.applyAsDouble(mailbox.get(i)) / metric.applyAsDouble(agrona.get(i));
        }
        return ratios;
    }

    double medianRatio(ToDoubleFunction<Measurement> metric) {
        return median(ratios(metric));
    }

    static double median(List<Measurement> rounds, ToDoubleFunction<Measurement> metric) {
        return median(rounds.stream().mapToDouble(metric).toArray());
    }

    static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    static double clientBytesPerCall(List<Measurement> rounds) {
        return rounds.stream().mapToLong(Measurement::clientBytes).sum()
                / (double) rounds.stream().mapToLong(Measurement::calls).sum();
    }

    static double echoBytesPerCall(List<Measurement> rounds) {
        return rounds.stream().mapToLong(Measurement::echoBytes).sum()
                / (double) rounds.stream().mapToLong(Measurement::calls).sum();
    }
}
