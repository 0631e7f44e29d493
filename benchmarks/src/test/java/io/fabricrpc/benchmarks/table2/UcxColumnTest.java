package io.fabricrpc.benchmarks.table2;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The {@code ucx} column between two JVMs over shared memory: every message arrives and the receiver's sum matches
 * (rank 0 checks count and checksum of each measurement and exits 1 otherwise). Skipped where libucx is missing.
 */
class UcxColumnTest {
    @Test
    void ucxActiveMessagesCarryEveryPayloadOverSharedMemory(@TempDir Path dir) throws Exception {
        String missing = UcxColumn.unavailableReason();
        assumeTrue(missing == null, () -> "skipped, OpenUCX is not installed: " + missing);
        Path output = dir.resolve("table2-ucx.md");
        Table2Benchmark benchmark = new Table2Benchmark();
        int exit = Table2Benchmark.commandLine(benchmark).execute("--rounds", "2", "--seconds", "0.05", "--slice", "0.05",
                "--warmup", "0", "--pin", "none", "--memory-per-stream", "65536", "--cmax", "4", "--timeout-ms", "20000",
                "--columns", "write,ucx", "--output", output.toString(), "--quiet", "--shm-dir", dir.toString());
        assertEquals(0, exit, "exit code (1: a measurement's count or checksum did not match, or a rank failed)");
        Table2Report report = benchmark.report();
        assertEquals(2 * 2 * 3, report.results().size(), "one measurement per round, column and size");
        for (Table2Result result : report.results()) {
            assertTrue(result.calls() > 0 && result.nanos() > 0, result.toString());
        }
        for (int size : Payloads.SIZES) {
            double value = report.medianRatio(new Table2Report.Ratio("write", UcxColumn.NAME), size);
            assertTrue(Double.isFinite(value) && value > 0, "write/ucx at " + size + " B: " + value);
        }
        String markdown = Files.readString(output);
        assertTrue(markdown.contains("UCX_TLS=posix,sysv,cma,self") && markdown.contains("write/ucx"), markdown);
        assertTrue(markdown.contains("UCX library " + UcxColumn.libraryVersion()) && !UcxColumn.libraryVersion()
                .startsWith("unknown"), "the report names the UCX the column ran on: " + UcxColumn.libraryVersion());
        assertEquals(2 * 2 * 3, Table2RawFile.read(Table2RawFile.besideReport(output)).size(), "raw file");
    }

    @Test
    void environmentPicksTheTransportsAndLeavesWhatTheCallerSet() {
        Map<String, String> shm = UcxColumn.environment("shm", "rxe0", Map.of());
        assertEquals("posix,sysv,cma,self", shm.get("UCX_TLS"));
        assertFalse(shm.containsKey("UCX_NET_DEVICES"));
        Map<String, String> rdma = UcxColumn.environment("rdma", "rxe0", Map.of("UCX_IB_GID_INDEX", "3"));
        assertEquals("rc_verbs,ud_verbs,self", rdma.get("UCX_TLS"));
        assertEquals("rxe0:1", rdma.get("UCX_NET_DEVICES"));
        assertFalse(rdma.containsKey("UCX_IB_GID_INDEX"), "the caller's own value wins (the ranks inherit it)");
    }

    @Test
    void anUnknownInstallationIsRefusedUpFrontNotByARank(@TempDir Path dir) {
        assumeTrue(UcxColumn.unavailableReason() != null, "libucx is installed here: nothing to refuse");
        assertEquals(2, Table2Benchmark.commandLine(new Table2Benchmark()).execute("--columns", "write,ucx",
                "--output", dir.resolve("x.md").toString()));
    }
}
