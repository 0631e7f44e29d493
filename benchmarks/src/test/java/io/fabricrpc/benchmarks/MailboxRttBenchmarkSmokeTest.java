package io.fabricrpc.benchmarks;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Keeps the harness from rotting: one very short round per placement; checks that numbers come out, not their size. */
class MailboxRttBenchmarkSmokeTest {
    @Test
    void oneShortRoundPerPlacementProducesFiniteNumbersAndAReport(@TempDir Path dir) throws Exception {
        Path output = dir.resolve("mailbox-rtt.md");
        MailboxRttBenchmark benchmark = new MailboxRttBenchmark();
        int exit = MailboxRttBenchmark.commandLine(benchmark).execute("--rounds", "1", "--seconds", "0.2",
                "--warmup", "0.2", "--mode", "both", "--idle", "yield", "--pin", "none", "--output", output.toString(),
                "--note", "smoke test");
        assertEquals(0, exit, "exit code");
        Report report = benchmark.report();
        assertNotNull(report);
        assertEquals(2, report.placements().size(), "intra-JVM and cross-process");
        for (PlacementResult placement : report.placements()) {
            for (List<Measurement> rounds : List.of(placement.mailbox(), placement.agrona())) {
                Measurement m = rounds.getFirst();
                assertTrue(m.calls() > 0, placement.label() + ": no calls");
                assertTrue(m.p50Nanos() > 0 && m.p50Nanos() <= m.p99Nanos() && m.p99Nanos() <= m.maxNanos(),
                        placement.label() + ": percentiles " + m);
                assertTrue(Double.isFinite(m.callsPerSecond()) && m.callsPerSecond() > 0, placement.label() + ": " + m);
                assertTrue(m.clientBytes() >= 0 && m.echoBytes() >= 0, placement.label() + ": allocation " + m);
            }
            for (double ratio : new double[] {placement.p50Ratio(), placement.p99Ratio(), placement.throughputRatio()}) {
                assertTrue(Double.isFinite(ratio) && ratio > 0, placement.label() + ": ratio " + ratio);
            }
        }
        String markdown = Files.readString(output);
        assertTrue(markdown.contains("## Machine") && markdown.contains("Intra-JVM") && markdown.contains("Cross-process")
                && markdown.contains("smoke test"), markdown);
    }

    @Test
    void rejectsAPayloadThatDoesNotFitOnePacket(@TempDir Path dir) {
        int exit = MailboxRttBenchmark.commandLine(new MailboxRttBenchmark()).execute("--payload", "241",
                "--output", dir.resolve("x.md").toString());
        assertEquals(2, exit, "picocli's usage-error exit code");
    }
}
