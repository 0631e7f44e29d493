package io.fabricrpc.benchmarks.table2;

import io.fabricrpc.benchmarks.Report;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The shm targets of the report, and the split of rounds by the raw ring's placement, on made-up rounds. */
class Table2TargetsTest {
    /** 1 s measurements: calls = calls/s. */
    private static Table2Result result(int round, String column, int size, long callsPerSecond) {
        return new Table2Result(round, column, size, 0, callsPerSecond, 1_000_000_000L, 0, 0, 0, 0, 0, 0);
    }

    @Test
    void roundsSplitAtTheLargestJumpOfTheRawRateOnlyWhenItIsLarge() {
        List<Table2Result> flipping = List.of(result(0, "raw", 256, 4_300_000), result(1, "raw", 256, 16_000_000),
                result(2, "raw", 256, 4_400_000), result(3, "raw", 256, 10_700_000), result(4, "raw", 256, 4_350_000));
        RingPlacement placement = RingPlacement.of(flipping).orElseThrow();
        assertEquals(List.of(1, 3), placement.fast());
        assertEquals(List.of(0, 2, 4), placement.slow());
        assertEquals(4_400_000, placement.below(), 1);
        assertEquals(10_700_000, placement.above(), 1);

        List<Table2Result> gradual = List.of(result(0, "raw", 8, 19_500_000), result(1, "raw", 8, 21_400_000),
                result(2, "raw", 8, 30_900_000), result(3, "raw", 8, 45_100_000), result(4, "raw", 8, 50_600_000));
        RingPlacement caught = RingPlacement.of(gradual).orElseThrow();
        assertEquals(List.of(3, 4), caught.fast(), "a round caught mid-move goes with its nearer neighbour");
        assertEquals(List.of(0, 1, 2), caught.slow());

        List<Table2Result> steady = List.of(result(0, "raw", 256, 4_300_000), result(1, "raw", 256, 6_000_000),
                result(2, "raw", 256, 5_000_000));
        assertEquals(Optional.empty(), RingPlacement.of(steady), "a 1.4x span is one placement");
        assertEquals(Optional.empty(), RingPlacement.of(List.of(result(0, "raw", 256, 4_300_000))));
    }

    @Test
    void eachTargetIsReportedWithItsRoundsAndPerPlacementWhenTheRingFlipped() {
        List<Table2Result> results = new ArrayList<>();
        long[] raw = {4_300_000, 16_000_000, 4_400_000, 10_700_000, 4_350_000};
        for (int round = 0; round < raw.length; round++) {
            results.add(result(round, "raw", 256, raw[round]));
            results.add(result(round, "write", 256, 8_000_000)); // 1.8x the slow ring, 0.5x / 0.75x the fast one
            results.add(result(round, "ovfl", 256, round == 0 ? 7_000_000 : 7_900_000));
            results.add(result(round, "trad", 256, 8_100_000));
        }
        Table2Report report = new Table2Report(new Report.Machine("cpu", 2, true, "1 GiB", "kernel", "jdk", "gc",
                java.time.Instant.EPOCH), 0, 0, "parameters", "memory", null, List.of("write", "ovfl", "trad", "raw"), List.of(256),
                results, Map.of(256, 272.0), "chart.png", "shm", "");
        String markdown = report.markdown();

        assertTrue(markdown.contains("- issue 3, write calls/s >= 0.8x raw at 256 B (write/raw >= 0.80x): **1.82x** (met;"
                + " 3 of 5 rounds at or above, 0.50x .. 1.86x); fast raw ring (rounds [1, 3], raw >= 10,700,000 msg/s):"
                + " median 0.62x, NOT met, 0 of 2 rounds at or above, 0.50x .. 0.75x; slow raw ring (rounds [0, 2, 4],"
                + " raw <= 4,400,000 msg/s): median 1.84x, met, 3 of 3 rounds at or above, 1.82x .. 1.86x"), markdown);
        assertTrue(markdown.contains("- issue 4, ovfl calls/s within 10% of write at 256 B (ovfl/write >= 0.90x):"
                + " **0.99x** (met; 4 of 5 rounds at or above, 0.88x .. 0.99x)"), markdown);
        assertTrue(markdown.contains("- issue 4, trad MB/s within 10% of raw at 256 B (trad/raw >= 0.90x)"), markdown);
        assertFalse(markdown.contains("at 8 B"), "no target of a size that did not run");
        assertFalse(markdown.contains("trad calls/s >= 10x write"), "its size (8 B) did not run");
    }
}
