package io.fabricrpc.fabric;

import io.fabricrpc.api.JobConfig;

import static org.junit.jupiter.api.Assertions.*;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Real JVMs started by {@link LocalLauncher}, a rank killed with SIGKILL. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LocalLauncherTest {

    static final Duration STEP = Duration.ofSeconds(30);

    static LocalLauncher launch(String mode) {
        return LocalLauncher.builder(FabricTestMain.class).processes(3)
            .jvmArgs("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx64m")
            // Killed peers are seen by their closed connection; a wider heartbeat margin keeps three JVMs
            // warming up on a shared 2-core machine from being mistaken for hung ones.
            .env(JobConfig.ENV_FAILURE_TIMEOUT_MS, "1000")
            .args(mode).start();
    }

    static void awaitJoined(LocalLauncher job) {
        for (LocalLauncher.RankProcess p : job.processes()) {
            p.awaitLine(l -> l.startsWith("JOINED"), STEP);
        }
    }

    static long micros(Instant t) {
        return t.getEpochSecond() * 1_000_000 + t.getNano() / 1000;
    }

    static long observedAt(String line) {
        for (String part : line.split(" ")) {
            if (part.startsWith("at=")) {
                return Long.parseLong(part.substring(3));
            }
        }
        throw new AssertionError("no at= in " + line);
    }

    @Test
    void threeJvmsJoinWithIdenticalMembershipAndShutDownCleanly() {
        try (LocalLauncher job = launch("shutdown")) {
            job.awaitAll(STEP);
            String first = null;
            for (LocalLauncher.RankProcess p : job.processes()) {
                assertEquals(0, p.exitCode(), job.report());
                String joined = p.awaitLine(l -> l.startsWith("JOINED"), Duration.ZERO);
                String membership = joined.substring(joined.indexOf("membership="));
                if (first == null) {
                    first = membership;
                }
                assertEquals(first, membership, "rank " + p.rank());
                p.awaitLine(l -> l.equals("SHUTDOWN_OK failures=[]"), Duration.ZERO);
            }
        }
    }

    @Test
    void killedMemberFailsTheSurvivorsWaitersQuickly() {
        try (LocalLauncher job = launch("survive")) {
            awaitJoined(job);
            Instant killedAt = Instant.now();
            job.process(2).kill();
            List<Long> latencies = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                String line = job.process(r).awaitLine(l -> l.startsWith("WAITER_FAILED"), Duration.ofSeconds(3));
                assertTrue(line.startsWith("WAITER_FAILED rank=2 "), line);
                latencies.add((observedAt(line) - micros(killedAt)) / 1000);
            }
            System.out.println("SIGKILL of rank 2 observed by waiters on ranks 0,1 after " + latencies + " ms");
            latencies.forEach(ms -> assertTrue(ms < 3000, "latency " + ms + " ms"));
            job.awaitAll(STEP); // survivors end with the shutdown barrier and exit 0
            for (int r = 0; r < 2; r++) {
                job.process(r).awaitLine(l -> l.equals("SHUTDOWN_OK failures=[2 ]"), Duration.ZERO);
            }
        }
    }

    @Test
    void hungMemberIsDeclaredFailedAfterTheFailureTimeout() throws Exception {
        try (LocalLauncher job = launch("survive")) {
            awaitJoined(job);
            Instant stoppedAt = Instant.now();
            Process stop = new ProcessBuilder("kill", "-STOP", Long.toString(job.process(2).pid())).start();
            assertTrue(stop.waitFor(5, TimeUnit.SECONDS) && stop.exitValue() == 0, "kill -STOP failed");
            List<Long> latencies = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                String line = job.process(r).awaitLine(l -> l.startsWith("WAITER_FAILED"), Duration.ofSeconds(5));
                assertTrue(line.startsWith("WAITER_FAILED rank=2 ") && line.contains("no heartbeat"), line);
                latencies.add((observedAt(line) - micros(stoppedAt)) / 1000);
            }
            System.out.println("SIGSTOP of rank 2 (failure timeout 1000 ms) observed by ranks 0,1 after "
                + latencies + " ms");
            latencies.forEach(ms -> assertTrue(ms >= 800 && ms < 4000, "latency " + ms + " ms"));
            job.process(2).kill();
            job.awaitAll(STEP);
        }
    }

    @Test
    void killedCoordinatorFailsEveryMember() {
        try (LocalLauncher job = launch("survive")) {
            awaitJoined(job);
            Instant killedAt = Instant.now();
            job.process(0).kill();
            List<Long> latencies = new ArrayList<>();
            for (int r = 1; r < 3; r++) {
                String line = job.process(r).awaitLine(l -> l.startsWith("WAITER_FAILED"), Duration.ofSeconds(3));
                latencies.add((observedAt(line) - micros(killedAt)) / 1000);
                assertTrue(line.contains("failed") || line.contains("liveness unknown")
                    || line.contains("closed"), line);
            }
            System.out.println("SIGKILL of the coordinator observed by ranks 1,2 after " + latencies + " ms");
            latencies.forEach(ms -> assertTrue(ms < 3000, "latency " + ms + " ms"));
            job.awaitAll(STEP);
            for (int r = 1; r < 3; r++) {
                job.process(r).awaitLine(l -> l.startsWith("COORDINATOR_LOST"), Duration.ZERO);
            }
        }
    }

    @Test
    void aRankExitingNonZeroKillsTheJobAndIsReported() {
        try (LocalLauncher job = launch("exit3")) {
            LocalLauncher.LaunchException e = assertThrows(LocalLauncher.LaunchException.class,
                () -> job.awaitAll(STEP));
            assertTrue(e.getMessage().contains("rank 1 exited with code 3"), e.getMessage());
            for (LocalLauncher.RankProcess p : job.processes()) {
                assertFalse(p.isAlive(), "rank " + p.rank() + " still running");
            }
        }
    }
}
