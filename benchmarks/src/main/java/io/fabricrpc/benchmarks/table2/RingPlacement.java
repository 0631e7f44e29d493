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
 * <p>A run saw both placements when its fastest round's raw rate is at least {@link #SPAN} times its slowest's
 * (within one placement the rounds stay well inside that); the split is then at the largest jump between the raw
 * rates of consecutive rounds, sorted by rate. A round caught mid-move lands on the side of its nearer neighbour.
 *
 * @param fast  the rounds above the jump (the raw ring's fast placement), in round order
 * @param slow  the rounds below it
 * @param below the fastest raw rate (calls/s) below the jump
 * @param above the slowest raw rate above it
 */
record RingPlacement(List<Integer> fast, List<Integer> slow, double below, double above) {
    /** Raw rates spanning at least this factor (fastest round over slowest) are taken as two placements. */
    static final double SPAN = 2.0;

    /** The split of {@code raw}'s rounds (one size), or empty when they stayed in one placement. */
    static Optional<RingPlacement> of(List<Table2Result> raw) {
        List<Table2Result> sorted = raw.stream().sorted(Comparator.comparingDouble(Table2Result::callsPerSecond)).toList();
        if (sorted.size() < 2
                || sorted.getLast().callsPerSecond() < SPAN * sorted.getFirst().callsPerSecond()) {
            return Optional.empty();
        }
        int split = 1;
        double jump = 0;
        for (int i = 1; i < sorted.size(); i++) {
            double factor = sorted.get(i).callsPerSecond() / sorted.get(i - 1).callsPerSecond();
            if (factor > jump) {
                jump = factor;
                split = i;
            }
        }
        return Optional.of(new RingPlacement(rounds(sorted.subList(split, sorted.size())), rounds(sorted.subList(0, split)),
                sorted.get(split - 1).callsPerSecond(), sorted.get(split).callsPerSecond()));
    }

    private static List<Integer> rounds(List<Table2Result> results) {
        return results.stream().map(Table2Result::round).sorted().toList();
    }
}
