package io.fabricrpc.invocation;

import io.fabricrpc.fabric.LocalLauncher;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** The fabric between separate JVMs started by the local launcher; every transport module runs it. */
public abstract class FabricCrossProcessTest {
    protected abstract TransportFixture fixture();

    private LocalLauncher launch(int processes, int threads, String... args) {
        List<String> jvm = new ArrayList<>(LocalLauncher.inheritedJvmFlags());
        jvm.add("-Xmx256m");
        fixture().config().forEach((k, v) -> jvm.add("-D" + k + "=" + v));
        return LocalLauncher.builder(FabricScenarioMain.class).processes(processes).threadsPerProcess(threads)
                .jvmArgs(jvm.toArray(String[]::new)).args(args).start();
    }

    @Test
    void callsBetweenThreeProcessesAreExactlyOnceAndInOrder() {
        long perPair = Long.getLong("fabricrpc.fabric.crossprocess.perPair", 50_000L);
        try (LocalLauncher job = launch(3, 2, "stress", Long.toString(perPair))) {
            for (int rank = 0; rank < 3; rank++) {
                String line = job.process(rank).awaitLine(l -> l.startsWith("STRESS_"), Duration.ofSeconds(240));
                assertTrue(line.equals("STRESS_OK rank=" + rank + " received=" + perPair * 6 * 2), line);
            }
            job.awaitAll(Duration.ofSeconds(60));
        }
    }

    @Test
    void killingAPeerFailsItsPendingCallReturnsWithinASecond() {
        try (LocalLauncher job = launch(2, 2, "killed-peer")) {
            job.process(1).awaitLine(l -> l.equals("IN_CALL"), Duration.ofSeconds(60));
            long killedAt = ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
            job.process(1).kill();
            String line = job.process(0).awaitLine(l -> l.startsWith("FAILED"), Duration.ofSeconds(30));
            long failedAt = Long.parseLong(line.split(" ")[1].substring(3));
            long millis = (failedAt - killedAt) / 1000;
            System.out.println("pending callReturns failed " + millis + " ms after the kill: " + line);
            assertTrue(line.contains("async=PeerFailedException") && line.contains("blocking=PeerFailedException"), line);
            assertTrue(millis < 1500, "detected after " + millis + " ms");
        }
    }
}
