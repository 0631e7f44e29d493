package io.fabricrpc.benchmarks.table2;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Keeps the harness from rotting: one very short round of every column at every size between two JVMs; checks
 * that every call arrived (rank 0 verifies count and checksum of each measurement), that numbers and a report
 * with its chart come out, not how large the numbers are.
 */
class Table2BenchmarkSmokeTest {
    @Test
    void oneShortRoundPerColumnAndSizeProducesAReportAndAChart(@TempDir Path dir) throws Exception {
        Path output = dir.resolve("table2-smoke.md");
        Table2Benchmark benchmark = new Table2Benchmark();
        int exit = Table2Benchmark.commandLine(benchmark).execute("--rounds", "1", "--seconds", "0.05", "--slice", "0.05",
                "--warmup", "0", "--pin", "none", "--memory-per-stream", "65536", "--cmax", "4", "--timeout-ms", "20000",
                "--output", output.toString(), "--note", "smoke test", "--quiet", "--shm-dir", dir.toString());
        assertEquals(0, exit, "exit code");
        try (var left = Files.walk(dir)) {
            List<Path> aeron = left.filter(p -> p.getFileName().toString().endsWith(".aeron")).toList();
            assertEquals(List.of(), aeron, "the aeron-ipc driver deletes its directory when the run ends");
        }
        Table2Report report = benchmark.report();
        assertNotNull(report);
        assertEquals(Columns.defaults("shm"), report.columns());
        assertEquals(Columns.defaults("shm").size() * 3, report.results().size(), "one measurement per column and size");
        for (Table2Result result : report.results()) {
            assertTrue(result.calls() > 0 && result.nanos() > 0, result.toString());
            assertTrue(Double.isFinite(result.callsPerSecond()), result.toString());
            assertTrue(result.senderBytes() >= 0 && result.receiverBytes() >= 0, result.toString());
        }
        assertEquals(8, report.ratiosShown().size(), "write/raw, send/raw, ovfl/write, trad/raw, write-reused/raw,"
                + " write/aeron-ipc, write-reused/aeron-ipc, trad/aeron-ipc: " + report.ratiosShown());
        for (Table2Report.Ratio ratio : report.ratiosShown()) {
            for (int size : Payloads.SIZES) {
                double value = report.medianRatio(ratio, size);
                assertTrue(Double.isFinite(value) && value > 0, ratio.label() + " at " + size + " B: " + value);
            }
        }
        String markdown = Files.readString(output);
        assertTrue(markdown.contains("## Machine") && markdown.contains("| 256 |") && markdown.contains("write/raw")
                && markdown.contains("smoke test") && markdown.contains("table2-smoke.png"), markdown);
        // One budget for every stream: 4 chunks of 16 KiB, a 64 KiB ring, Aeron terms of 128 KiB (window: half).
        assertTrue(markdown.contains("Memory per stream (`--memory-per-stream`): **64 KiB**")
                && markdown.contains("4 x 16384 B") && markdown.contains("one ring of 64 KiB")
                && markdown.contains("3 terms of 128 KiB"), markdown);
        BufferedImage chart = ImageIO.read(dir.resolve("table2-smoke.png").toFile());
        assertNotNull(chart, "the PNG decodes");
        assertTrue(chart.getWidth() > 100 && chart.getHeight() > 100);
    }

    /** max-raw is the RDMA baseline, but its Link.write path runs over any transport: checked here over shm. */
    @Test
    void maxRawMovesEveryMessageOverTheFabricsLink(@TempDir Path dir) {
        Path output = dir.resolve("table2-maxraw.md");
        Table2Benchmark benchmark = new Table2Benchmark();
        int exit = Table2Benchmark.commandLine(benchmark).execute("--rounds", "2", "--seconds", "0.05", "--slice", "0.05",
                "--warmup", "0", "--pin", "none", "--memory-per-stream", "65536", "--cmax", "4", "--timeout-ms", "20000",
                "--columns", "write,max-raw", "--output", output.toString(), "--quiet");
        assertEquals(0, exit, "exit code");
        Table2Report report = benchmark.report();
        assertEquals(2 * 2 * 3, report.results().size());
        for (int size : Payloads.SIZES) {
            double value = report.medianRatio(new Table2Report.Ratio("write", LinkWriteColumn.NAME), size);
            assertTrue(Double.isFinite(value) && value > 0, "write/max-raw at " + size + " B: " + value);
        }
    }

    @Test
    void expectedSumMatchesTheCallsBodies() {
        for (int size : Payloads.SIZES) {
            Payloads.Sink.reset();
            long first = Long.MAX_VALUE - 5; // wraps, as the receiver's sum may
            for (long i = first; i != first + 11; i++) {
                Payloads.call(size, i).run();
            }
            assertEquals(11, Payloads.Sink.count);
            assertEquals(Payloads.expectedSum(size, first, 11), Payloads.Sink.sum, size + " B");
        }
    }

    @Test
    void rejectsAnUnsupportedSizeAndAnUnknownColumn(@TempDir Path dir) {
        String md = dir.resolve("x.md").toString();
        assertEquals(2, Table2Benchmark.commandLine(new Table2Benchmark()).execute("--sizes", "8,32", "--output", md));
        assertEquals(2, Table2Benchmark.commandLine(new Table2Benchmark()).execute("--columns", "write,nope", "--output", md));
        assertEquals(2, Table2Benchmark.commandLine(new Table2Benchmark()).execute("--memory-per-stream", "100000",
                "--output", md), "not a power of two");
        Table2Benchmark tenChunks = new Table2Benchmark();
        Table2Benchmark.commandLine(tenChunks).parseArgs("--memory-per-stream", "1048576", "--cmax", "10", "--output", md);
        tenChunks.validate();
        assertEquals(104832, tenChunks.chunkSize, "1 MiB / 10, rounded down to a multiple of 64");
        assertEquals(1048576, tenChunks.ringCapacity);
        assertEquals(2097152, tenChunks.aeronTermLength);
    }
}
