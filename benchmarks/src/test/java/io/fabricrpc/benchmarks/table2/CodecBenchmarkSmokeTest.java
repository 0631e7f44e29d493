package io.fabricrpc.benchmarks.table2;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The codec benchmark runs end to end in a moment and reports every size, with 2 or 3 bytes beyond the captures. */
class CodecBenchmarkSmokeTest {
    @Test
    void shortRunReportsEverySize(@TempDir Path dir) throws Exception {
        Path output = dir.resolve("codec.md");
        int exit = new CommandLine(new CodecBenchmark()).execute("--rounds", "1", "--slice", "0.01", "--warmup", "0",
                "--output", output.toString(), "--note", "smoke test");
        assertEquals(0, exit, "exit code");
        String md = Files.readString(output);
        assertTrue(md.contains("| 8 | ") && md.contains("| 64 | ") && md.contains("| 256 | "), md);
        assertTrue(md.contains("| 10 | 2 |") && md.contains("| 66 | 2 |") && md.contains("| 259 | 3 |"),
                "record bytes and bytes beyond the captures: " + md);
        assertTrue(md.contains("smoke test"), md);
    }
}
