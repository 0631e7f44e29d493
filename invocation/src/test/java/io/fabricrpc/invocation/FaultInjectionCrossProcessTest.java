package io.fabricrpc.invocation;

import io.fabricrpc.api.JobConfig;
import io.fabricrpc.fabric.LocalLauncher;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Faults injected from outside into separate JVMs (SIGSTOP and resume, SIGKILL of the coordinator, of an interior
 * broadcast rank, of a sender mid-stream), each asserting the failure semantics the guide promises; every
 * transport module runs it. The shm module adds truncated and full shared-memory files
 * ({@code ShmFaultInjectionCrossProcessTest}). Ranks run {@link FaultScenarioMain}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class FaultInjectionCrossProcessTest {
    protected static final Duration START = Duration.ofSeconds(90); // joining JVMs on a loaded machine may be slow
    protected static final Duration STEP = Duration.ofSeconds(30);

    /** How long the ranks may take to start and join; a transport on an emulated machine widens it. */
    protected Duration startTimeout() {
        return START;
    }

    /** How long one step of a scenario may take once the ranks run (an upper bound, not a measured cost). */
    protected Duration stepTimeout() {
        return STEP;
    }

    /** This test's own shm.dir: no other job's files are touched by its faults, nor its files by theirs. */
    protected Path base;

    protected abstract TransportFixture fixture();

    /** Creates {@link #base} (under /dev/shm when there is one); removed after the test. */
    protected Path privateBase() throws IOException {
        Path shm = Path.of("/dev/shm");
        base = Files.isDirectory(shm) ? Files.createTempDirectory(shm, "fabricrpc-faults-")
                : Files.createTempDirectory("fabricrpc-faults-");
        return base;
    }

    @AfterEach
    void removeBase() throws IOException {
        if (base != null) {
            unmount(base);
            try (Stream<Path> files = Files.walk(base)) {
                files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }

    /** Undoes a mount on {@link #base}, if the test made one; nothing by default. */
    protected void unmount(Path directory) {
    }

    protected LocalLauncher launch(int processes, int threads, long failureTimeoutMillis, Map<String, String> extra,
                                   String scenario) {
        List<String> jvm = new ArrayList<>(LocalLauncher.inheritedJvmFlags());
        jvm.add("-Xmx256m");
        fixture().config().forEach((k, v) -> jvm.add("-D" + k + "=" + v));
        if (!extra.containsKey("shm.dir")) {
            try {
                jvm.add("-Dshm.dir=" + privateBase());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        extra.forEach((k, v) -> jvm.add("-D" + k + "=" + v));
        jvm.addAll(fixture().childJvmOptions());
        return LocalLauncher.builder(FaultScenarioMain.class).processes(processes).threadsPerProcess(threads)
                .env(JobConfig.ENV_FAILURE_TIMEOUT_MS, Long.toString(failureTimeoutMillis))
                .jvmArgs(jvm.toArray(String[]::new)).args(scenario).start();
    }

    protected static long micros(Instant t) {
        return t.getEpochSecond() * 1_000_000 + t.getNano() / 1000;
    }

    /** The value of {@code key=} in a line (up to the next space). */
    protected static String field(String line, String key) {
        int at = line.indexOf(key + "=");
        if (at < 0) {
            throw new AssertionError("no " + key + "= in " + line);
        }
        int end = line.indexOf(' ', at);
        return line.substring(at + key.length() + 1, end < 0 ? line.length() : end);
    }

    protected static String await(LocalLauncher job, int rank, String prefix, Duration timeout) {
        return job.process(rank).awaitLine(l -> l.startsWith(prefix), timeout);
    }

    protected static void signal(long pid, String signal) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start();
        assertTrue(kill.waitFor(5, TimeUnit.SECONDS) && kill.exitValue() == 0, "kill -" + signal + " " + pid);
    }

    /** Waits until {@code rank} printed {@code count} lines starting with {@code prefix} (output is piped: it lags). */
    protected void awaitCount(LocalLauncher job, int rank, String prefix, long count, String what) {
        long deadline = System.nanoTime() + stepTimeout().toNanos();
        while (job.process(rank).output().stream().filter(l -> l.startsWith(prefix)).count() < count) {
            assertTrue(System.nanoTime() < deadline, what + ": " + job.process(rank).output());
            LockSupport.parkNanos(20_000_000);
        }
    }

    private void awaitReady(LocalLauncher job) {
        for (LocalLauncher.RankProcess p : job.processes()) {
            p.awaitLine(l -> l.equals("READY"), startTimeout());
        }
    }

    /** Protected: a transport whose run shows a known defect here may override it to disable it, saying why. */
    @Test
    protected void aRankStoppedPastTheTimeoutIsFencedAndFailsStopWhenResumed() throws Exception {
        try (LocalLauncher job = launch(3, 1, 1500, Map.of(), "stall")) {
            awaitReady(job);
            await(job, 2, "STREAMING", stepTimeout());
            long stoppedAt = micros(Instant.now());
            signal(job.process(2).pid(), "STOP");
            String verdict0 = await(job, 0, "VERDICT", stepTimeout());
            String verdict1 = await(job, 1, "VERDICT", stepTimeout());
            assertTrue(field(verdict1, "rank").equals("2") && verdict1.contains("no heartbeat"), verdict1);
            long resumedAt = micros(Instant.now());
            signal(job.process(2).pid(), "CONT");

            // Survivors: a send to the failed rank fails at once; none of its calls runs after the fence.
            String send = await(job, 1, "SEND_TO_FAILED", stepTimeout());
            assertTrue(field(send, "outcome").startsWith("PeerFailedException"), send);
            String result = await(job, 1, "RESULT", stepTimeout());
            assertEquals("0", field(result, "ran_after_fence"), result);
            // The stalled rank, once resumed: its stream, its pending and new calls and its close all fail.
            String fenced = await(job, 2, "SELF_FENCED", stepTimeout());
            assertTrue(field(fenced, "error").startsWith("PeerFailedException"), fenced);
            String stalled = await(job, 2, "STALLED", stepTimeout());
            for (String part : stalled.substring("STALLED ".length()).split(" \\| ")) {
                assertTrue(part.substring(part.indexOf('=') + 1).startsWith("PeerFailedException"), stalled);
            }
            String refused = job.process(1).output().stream().filter(l -> l.startsWith("ERROR_REPORTED")).findFirst()
                    .orElse("none");
            System.out.printf("SIGSTOP fence: verdict %d ms after the stop (rank 0 %d ms); the worker seeing"
                            + " the verdict -> its send refused %d us; resume -> stalled rank self-fenced %d ms"
                            + " (%s calls accepted meanwhile, none run);"
                            + " its inbox fenced and reported to the error listener: %s%n",
                    (Long.parseLong(field(verdict1, "at")) - stoppedAt) / 1000,
                    (Long.parseLong(field(verdict0, "at")) - stoppedAt) / 1000,
                    Long.parseLong(field(send, "at")) - Long.parseLong(field(send, "asked_at")),
                    (Long.parseLong(field(fenced, "at")) - resumedAt) / 1000, field(fenced, "sent_after_resume"),
                    refused.startsWith("ERROR") ? (Long.parseLong(field(refused, "at"))
                            - Long.parseLong(field(verdict1, "at"))) / 1000 + " ms after the verdict (" + refused + ")"
                            : "none reported");
        }
    }

    @Test
    void losingTheCoordinatorFailsEverySurvivorTheSameWayWithinTheBound() {
        long timeout = 3000;
        try (LocalLauncher job = launch(3, 1, timeout, Map.of(), "coordinator")) {
            awaitReady(job);
            long killedAt = micros(Instant.now());
            job.process(0).kill();
            List<Long> latencies = new ArrayList<>();
            List<String> reasons = new ArrayList<>();
            for (int rank = 1; rank <= 2; rank++) {
                String lost = await(job, rank, "LOST", stepTimeout());
                latencies.add((Long.parseLong(field(lost, "at")) - killedAt) / 1000);
                String[] parts = lost.substring(lost.indexOf("pending=")).split(" \\| ");
                for (String part : parts) {
                    String value = part.substring(part.indexOf('=') + 1);
                    if (part.startsWith("rank0=")) {
                        reasons.add(value);
                    } else {
                        assertTrue(value.startsWith("PeerFailedException") && value.contains("coordinator")
                                        && value.contains("exited or crashed"),
                                "rank " + rank + ": " + part + " in " + lost);
                    }
                }
            }
            System.out.println("SIGKILL of the coordinator: survivors 1,2 reported it after " + latencies + " ms");
            assertEquals(reasons.get(0), reasons.get(1), "both survivors report the loss the same way");
            latencies.forEach(ms -> assertTrue(ms < timeout, "reported " + ms + " ms after the kill"));
        }
    }

    /** Runs the broadcast scenario to the end: rank 1 (interior: worker 1/1 forwards to rank 2) dies mid-broadcast. */
    private String[] broadcastPastAKilledInteriorRank(LocalLauncher job) {
        awaitReady(job);
        await(job, 0, "BCAST1_DONE", stepTimeout());
        for (int rank = 0; rank < 3; rank++) {
            awaitCount(job, rank, "BCAST_RAN n=1 ", 2, "broadcast 1 on every worker of rank " + rank);
        }
        await(job, 1, "BUSY", stepTimeout());
        await(job, 1, "BCAST_RAN n=2 ", stepTimeout()); // worker 1/0 ran it: the broadcast is in the tree
        await(job, 0, "BCAST2_SENT", stepTimeout());
        long killedAt = micros(Instant.now());
        job.process(1).kill();
        String ended = await(job, 0, "BCAST2 ", stepTimeout());
        String live = await(job, 0, "LIVE_AFTER", stepTimeout());
        long reached = job.process(2).output().stream().filter(l -> l.startsWith("BCAST_RAN n=2 ")).count();
        System.out.println("SIGKILL of interior rank 1 mid-broadcast: the caller's wait ended "
                + (Long.parseLong(field(ended, "at")) - killedAt) / 1000 + " ms after the kill: " + ended
                + "; rank 2 workers reached: " + reached);
        return new String[] {ended, live, Long.toString(reached)};
    }

    @Test
    void aBroadcastWhoseInteriorRankDiesEndsAndTheSurvivorsServe() {
        try (LocalLauncher job = launch(3, 2, 3000, Map.of(), "broadcast")) {
            String[] seen = broadcastPastAKilledInteriorRank(job);
            String outcome = seen[0].substring(seen[0].indexOf("outcome=") + "outcome=".length());
            assertTrue(outcome.startsWith("returned") || (outcome.startsWith("BroadcastIncompleteException")
                    && outcome.contains("rank 1")), seen[0]);
            assertEquals("LIVE_AFTER returned:20,21", seen[1], "rank 2's workers still serve");
        }
    }

    @Test
    void aBroadcastReachesEveryLiveWorkerOrNamesThoseItMissed() {
        try (LocalLauncher job = launch(3, 2, 3000, Map.of(), "broadcast")) {
            String[] seen = broadcastPastAKilledInteriorRank(job);
            boolean reachedAll = seen[2].equals("2") && seen[0].contains("outcome=returned");
            boolean namedMissed = seen[0].contains("2/0") && seen[0].contains("2/1");
            assertTrue(reachedAll || namedMissed, "live workers 2/0 and 2/1 neither reached nor named: " + seen[0]);
        }
    }

    @Test
    void aSenderKilledMidStreamLeavesNoPartialCallRun() {
        try (LocalLauncher job = launch(2, 2, 3000, Map.of(), "midstream")) {
            awaitReady(job);
            await(job, 1, "STREAMING", startTimeout());
            try {
                Thread.sleep(300);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            job.process(1).kill();
            String received = await(job, 0, "RECEIVED", stepTimeout());
            System.out.println("SIGKILL of a sender mid-stream: " + received);
            assertTrue(Long.parseLong(field(received, "oneway")) > 0 && Long.parseLong(field(received, "streamed")) > 0,
                    received);
            assertEquals("0", field(received, "corrupt"), received);
            assertEquals("0", field(received, "out_of_order"), received);
            assertEquals("ALIVE returned:7", await(job, 0, "ALIVE", stepTimeout()));
        }
    }

    @Test
    void aFaultFreeStreamOfVaryingCallsIsNeverTakenForCorrupt() {
        try (LocalLauncher job = launch(2, 2, 3000, Map.of(), "midstream")) {
            awaitReady(job);
            String streamed = job.process(1).awaitLine(l -> l.startsWith("STREAMED"), startTimeout().plusSeconds(10));
            List<String> errors = job.process(0).output().stream().filter(l -> l.startsWith("ERROR_REPORTED")).toList();
            assertEquals(List.of(), errors, "no fault was injected before " + streamed);
        }
    }
}
