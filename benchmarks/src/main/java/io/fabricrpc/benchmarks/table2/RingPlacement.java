package io.fabricrpc.benchmarks.table2;

import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * The rounds of one payload size split by how fast the raw baseline ran in them, when it jumped between two
 * placements during the run. On the shared 2-vCPU VMs this project is measured on, the hypervisor moves the two
 * vCPUs between physical cores; the Agrona ring then runs at one of two rates (e.g. 4.3 M or 10 to 17 M messages/s at
 * 256 B) and a ratio against it means something different in each. A median over rounds of mixed placements hides
 * that, so targets are also reported per placement.
 *
 * <p>The split is at the largest jump between the raw rates of consecutive rounds (sorted by rate), and only when
 * that jump is at least {@link #JUMP} times: within one placement the rounds stay well inside that.
 *
 * @param fast  the rounds above the jump (the raw ring's fast placement), in round order
 * @param slow  the rounds below it
 * @param below the fastest raw rate (calls/s) below the jump
 * @param above the slowest raw rate above it
 */
record RingPlacement(List<Integer> fast, List<Integer> slow, double below, double above) {
    /** A jump between two rounds' raw rates of at least this factor is taken as a change of placement. */
    static final double JUMP = 1.5;

    /** The split of {@code raw}'s rounds (one size), or empty when they stayed in one placement. */
    static Optional<RingPlacement> of(List<Table2Result> raw) {
        List<Table2Result> sorted = raw.stream().sorted(Comparator.comparingDouble(Table2Result::callsPerSecond)).toList();
        int split = -1;
        double jump = JUMP;
        for (int i = 1; i < sorted.size(); i++) {
            double factor = sorted.get(i).callsPerSecond() / sorted.get(i - 1).callsPerSecond();
            if (factor >= jump) {
                jump = factor;
                split = i;
            }
        }
        if (split < 0) {
            return Optional.empty();
        }
        return Optional.of(new RingPlacement(rounds(sorted.subList(split, sorted.size())), rounds(sorted.subList(0, split)),
                sorted.get(split - 1).callsPerSecond(), sorted.get(split).callsPerSecond()));
    }

    private static List<Integer> rounds(List<Table2Result> results) {
        return results.stream().map(Table2Result::round).sorted().toList();
    }
}
