package io.fabricrpc.invocation;

import io.fabricrpc.fabric.LocalLauncher;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The fabric between separate JVMs started by the local launcher; every transport module runs it. */
public abstract class FabricCrossProcessTest {
    protected abstract TransportFixture fixture();

    private LocalLauncher launch(int processes, int threads, String... args) {
        List<String> jvm = new ArrayList<>(LocalLauncher.inheritedJvmFlags());
        jvm.add("-Xmx256m");
        fixture().config().forEach((k, v) -> jvm.add("-D" + k + "=" + v));
        jvm.addAll(fixture().childJvmOptions());
        return LocalLauncher.builder(FabricScenarioMain.class).processes(processes).threadsPerProcess(threads)
                .jvmArgs(jvm.toArray(String[]::new)).args(args).start();
    }

    /** Processes of the stress run: three unless {@code fabricrpc.fabric.crossprocess.processes} says otherwise. */
    protected int stressProcesses() {
        return Integer.getInteger("fabricrpc.fabric.crossprocess.processes", 3);
    }

    @Test
    void callsBetweenProcessesAreExactlyOnceAndInOrder() {
        int processes = stressProcesses();
        int threads = 2;
        int workers = processes * threads;
        long perPair = Long.getLong("fabricrpc.fabric.crossprocess.perPair", 280_000L); // 36 pairs: 10^7 calls
        try (LocalLauncher job = launch(processes, threads, "stress", Long.toString(perPair))) {
            for (int rank = 0; rank < processes; rank++) {
                String line = job.process(rank).awaitLine(l -> l.startsWith("STRESS_"), Duration.ofSeconds(240));
                assertTrue(line.equals("STRESS_OK rank=" + rank + " received=" + perPair * workers * threads), line);
            }
            job.awaitAll(Duration.ofSeconds(60));
        }
    }

    @Test
    void killingAPeerFailsItsPendingCallReturnsAndBlockedSendersWithinASecond() {
        try (LocalLauncher job = launch(2, 2, "killed-peer")) {
            job.process(1).awaitLine(l -> l.equals("IN_CALL"), Duration.ofSeconds(240)); // joining JVMs may be slow
            job.process(0).awaitLine(l -> l.startsWith("SENDER_BLOCKED"), Duration.ofSeconds(60));
            long killedAt = ChronoUnit.MICROS.between(Instant.EPOCH, Instant.now());
            job.process(1).kill();
            String line = job.process(0).awaitLine(l -> l.startsWith("FAILED"), Duration.ofSeconds(30));
            long failedAt = Long.parseLong(line.split(" ")[1].substring(3));
            long millis = (failedAt - killedAt) / 1000;
            System.out.println("pending calls failed " + millis + " ms after the kill: " + line);
            assertTrue(line.contains("async=PeerFailedException") && line.contains("blocking=PeerFailedException")
                    && line.contains("sender=PeerFailedException"), line);
            assertTrue(millis < 1500, "detected after " + millis + " ms");
            // The survivor closes its fabric (and endpoint) without an error and keeps no thread of it running.
            String closed = job.process(0).awaitLine(l -> l.startsWith("CLOSED leftover=["), Duration.ofSeconds(30));
            String names = closed.substring("CLOSED leftover=[".length(), closed.length() - 1);
            List<String> leftover = names.isEmpty() ? List.of() : Arrays.stream(names.split(", "))
                    .filter(name -> !fixture().isProcessWideThread(name)).toList();
            assertEquals(List.of(), leftover, "threads still running 5 s after the survivor closed its fabric");
            job.awaitAll(Duration.ofSeconds(30));
            assertEquals(0, job.process(0).exitCode(), job.report());
        }
    }
}
