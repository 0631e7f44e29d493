package io.fabricrpc.mcts.hex;

import io.fabricrpc.fabric.LocalLauncher;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The command across real processes: nothing lost or duplicated across 2 × 2, and a killed rank ends the search. */
class HexMctsJobTest {
    static LocalLauncher start(int processes, int threads, String... args) {
        List<String> jvm = new ArrayList<>(LocalLauncher.inheritedJvmFlags());
        ManagementFactory.getRuntimeMXBean().getInputArguments().stream().filter(a -> a.startsWith("-Dfabric.")
                || a.startsWith("-Dshm.") || a.startsWith("-Drdma.")).forEach(jvm::add);
        jvm.add("-Xmx512m");
        // A killed rank is seen by its pid (milliseconds); a 60-s heartbeat bound keeps a rank that the CI machine
        // starves for over 10 s (seen twice at load average 20-25 on 2 vCPUs) from being declared dead.
        jvm.add("-Dshm.peerTimeoutMillis=60000");
        List<String> all = new ArrayList<>(List.of("-p", "" + processes, "-t", "" + threads));
        all.addAll(List.of(args));
        return LocalLauncher.builder(HexMcts.class).processes(processes).threadsPerProcess(threads)
                .jvmArgs(jvm.toArray(String[]::new)).args(all.toArray(String[]::new)).start();
    }

    static Map<String, String> fields(String line) {
        Map<String, String> m = new HashMap<>();
        for (String part : line.split(" ")) {
            int eq = part.indexOf('=');
            if (eq > 0) {
                m.put(part.substring(0, eq), part.substring(eq + 1));
            }
        }
        return m;
    }

    @ParameterizedTest
    @ValueSource(strings = {"trad", "ovfl"})
    void everyRolloutStartedAcrossTwoProcessesCompletesExactlyOnce(String aggregation) {
        // 7x7 with small phases: many phases, many deferred selections, nodes on all four workers.
        long t0 = System.nanoTime();
        try (LocalLauncher job = start(2, 2, "-n", "7", "-r", "30000", "--phase", "1024", "--in-flight", "256",
                "-s", "60", "-a", aggregation, "--timeout", "60")) {
            String line = job.process(0).awaitLine(l -> l.startsWith("MCTS_RESULT") || l.startsWith("MCTS_FAILED"),
                    Duration.ofSeconds(120));
            Map<String, String> f = fields(line);
            assertTrue(line.startsWith("MCTS_RESULT"), line);
            assertEquals("30000", f.get("started"), line);
            assertEquals("30000", f.get("completed"), line);
            assertEquals("30000", f.get("rootVisits"), line);
            assertEquals("30000", f.get("simulations"), line);
            assertTrue(Long.parseLong(f.get("visits")) > 30000, line);
            double result = (System.nanoTime() - t0) / 1e9;
            job.awaitAll(Duration.ofSeconds(60));
            System.out.printf("%s: result %.1f s after the launch, every rank exited %.1f s after it%n", aggregation,
                    result, (System.nanoTime() - t0) / 1e9);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 0})
    void aKilledProcessEndsTheSearchOnTheSurvivorWithPeerFailedException(int victim) {
        try (LocalLauncher job = start(2, 1, "-n", "9", "-s", "120", "--phase", "256", "--timeout", "60")) {
            job.process(0).awaitLine(l -> l.startsWith("searching:"), Duration.ofSeconds(60));
            long killed = System.nanoTime();
            job.process(victim).kill();
            int survivor = 1 - victim;
            String line = job.process(survivor).awaitLine(l -> l.startsWith("MCTS_"), Duration.ofSeconds(20));
            double seconds = (System.nanoTime() - killed) / 1e9;
            assertTrue(line.startsWith("MCTS_FAILED") && line.contains("PeerFailedException"), line);
            System.out.printf("rank %d killed, rank %d failed %.3f s later: %s%n", victim, survivor, seconds, line);
            assertTrue(seconds < 20, "survivor failed after " + seconds + " s");
            job.process(survivor).process().waitFor(20, java.util.concurrent.TimeUnit.SECONDS);
            assertEquals(3, job.process(survivor).exitCode());
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
