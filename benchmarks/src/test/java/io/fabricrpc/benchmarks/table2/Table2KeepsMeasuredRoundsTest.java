package io.fabricrpc.benchmarks.table2;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A rank that dies after measuring (as a baseline's teardown did) costs neither the report nor the raw figures. */
class Table2KeepsMeasuredRoundsTest {
    @Test
    void aRankDyingAfterTheRoundsStillLeavesTheReportAndTheRawFile(@TempDir Path dir) throws Exception {
        Path output = dir.resolve("table2-teardown.md");
        Table2Benchmark benchmark = new Table2Benchmark();
        int exit = Table2Benchmark.commandLine(benchmark).execute("--rounds", "2", "--seconds", "0.05", "--slice",
                "0.05", "--warmup", "0", "--pin", "none", "--memory-per-stream", "65536", "--cmax", "4",
                "--timeout-ms", "20000", "--columns", "write,trad", "--output", output.toString(), "--quiet",
                "--shm-dir", dir.toString(), "--rank-jvm-option=-D" + Table2Rank.HALT_AFTER_MEASURING + "=true");
        assertEquals(0, exit, "every round was measured: the report is complete");
        assertEquals(2 * 2 * 3, benchmark.report().results().size(), "rounds x columns x sizes");
        String markdown = Files.readString(output);
        assertTrue(markdown.contains("A rank failed after 2 of 2 rounds") && markdown.contains("exited with code 134"),
                markdown);
        List<Table2Result> raw = Table2RawFile.read(Table2RawFile.besideReport(output));
        assertEquals(benchmark.report().results(), raw, "the raw file has every measurement, as measured");
    }

    @Test
    void completeRoundsCountOnlyRoundsWithEveryColumnAndSize() {
        List<String> columns = List.of("write", "trad");
        List<Table2Result> results = List.of(result(0, "write"), result(0, "trad"), result(1, "write"),
                result(0, RdmaBaselines.DARPC));
        assertEquals(1, Table2RawFile.completeRounds(results, columns, 2, 3));
        assertEquals(0, Table2RawFile.completeRounds(results, columns, 3, 3), "a size missing in round 0");
        assertEquals(0, Table2RawFile.completeRounds(List.of(), columns, 2, 3));
    }

    private static Table2Result result(int round, String column) {
        return new Table2Result(round, column, 8, 0, 10, 100, 0, 0, 0, 0, 0, 0);
    }

    @Test
    void aResultLineParsesBackToTheSameResult() {
        Table2Result result = new Table2Result(3, "ucx", 64, 1, 12_345, 678_901, 1, 2, 3, 4, 5, 6);
        assertEquals(result, Table2Result.parse(result.line()));
    }
}
