package io.fabricrpc.benchmarks.table2;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The call-cost benchmark runs end to end in a moment: every call it sends runs, every size and column is reported. */
class CallCostBenchmarkSmokeTest {
    @Test
    void shortRunReportsEveryColumnAndSize(@TempDir Path dir) throws Exception {
        Path output = dir.resolve("call-cost.md");
        long before = Payloads.Sink.count;
        int exit = new CommandLine(new CallCostBenchmark()).execute("--rounds", "2", "--batches", "2", "--calls", "50",
                "--warmup", "2", "--pin", "-1", "--output", output.toString(), "--note", "smoke test");
        assertEquals(0, exit, "exit code");
        // 3 columns x 3 sizes x (2 warm-up + 2 rounds x 2 measured batches) x 50 calls, each run exactly once.
        assertEquals(3 * 3 * (2 + 2 * 2) * 50, Payloads.Sink.count - before, "calls run");
        String md = Files.readString(output);
        assertTrue(md.contains("| 8 | ") && md.contains("| 64 | ") && md.contains("| 256 | "), md);
        assertTrue(md.contains("trad/write") && md.contains("ovfl/write"), md);
        assertTrue(md.contains("smoke test"), md);
    }
}
