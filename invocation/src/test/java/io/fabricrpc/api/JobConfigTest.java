package io.fabricrpc.api;


import static org.junit.jupiter.api.Assertions.*;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JobConfigTest {

    static final String SECRET = "an-explicit-job-secret-42";

    static Map<String, String> env(String... kv) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    static IllegalArgumentException fails(Map<String, String> env, Map<String, String> props) {
        return assertThrows(IllegalArgumentException.class, () -> JobConfig.fromEnvironment(env, props));
    }

    @Test
    void explicitVariables() {
        JobConfig c = JobConfig.fromEnvironment(env("FABRICRPC_RANK", "2", "FABRICRPC_SIZE", "4",
            "FABRICRPC_COORDINATOR", "10.0.0.7:7100", "FABRICRPC_THREADS", "8", "FABRICRPC_JOB_SECRET", SECRET,
            "FABRICRPC_HEARTBEAT_MS", "50", "FABRICRPC_FAILURE_TIMEOUT_MS", "300", "FABRICRPC_LOCAL_RANK", "0"),
            Map.of());
        assertEquals(2, c.rank());
        assertEquals(4, c.size());
        assertEquals(8, c.threadsPerProcess());
        assertEquals(0, c.localRank());
        assertEquals("10.0.0.7", c.coordinatorHost());
        assertEquals(7100, c.coordinatorPort());
        assertArrayEquals(SECRET.getBytes(StandardCharsets.UTF_8), c.jobSecret());
        assertEquals(Duration.ofMillis(50), c.heartbeatInterval());
        assertEquals(Duration.ofMillis(300), c.failureTimeout());
        assertEquals(JobConfig.Source.EXPLICIT, c.source());
        assertFalse(c.toString().contains(SECRET), c.toString());
        assertTrue(c.toString().contains("<redacted>"));
    }

    @Test
    void systemPropertiesOverrideVariables() {
        JobConfig c = JobConfig.fromEnvironment(env("FABRICRPC_RANK", "2", "FABRICRPC_SIZE", "4",
            "FABRICRPC_COORDINATOR", "[::1]:7100", "FABRICRPC_JOB_SECRET", SECRET),
            Map.of("fabricrpc.rank", "3", "fabricrpc.threads", "2"));
        assertEquals(3, c.rank());
        assertEquals(2, c.threadsPerProcess());
        assertEquals("::1", c.coordinatorHost());
        assertEquals(7100, c.coordinatorPort());
    }

    @Test
    void bareIpv6CoordinatorTakesThePortFromItsOwnVariable() {
        JobConfig c = JobConfig.fromEnvironment(env("FABRICRPC_RANK", "0", "FABRICRPC_SIZE", "2",
            "FABRICRPC_COORDINATOR", "fe80::1", "FABRICRPC_COORDINATOR_PORT", "7001", "FABRICRPC_JOB_SECRET", SECRET),
            Map.of());
        assertEquals("fe80::1", c.coordinatorHost());
        assertEquals(7001, c.coordinatorPort());
    }

    @Test
    void explicitTakesPrecedenceOverSlurm() {
        JobConfig c = JobConfig.fromEnvironment(env("FABRICRPC_RANK", "1", "FABRICRPC_SIZE", "2",
            "FABRICRPC_COORDINATOR", "127.0.0.1:9000", "FABRICRPC_JOB_SECRET", SECRET,
            "SLURM_PROCID", "5", "SLURM_NTASKS", "8"), Map.of());
        assertEquals(1, c.rank());
        assertEquals(JobConfig.Source.EXPLICIT, c.source());
    }

    @Test
    void slurm() {
        JobConfig c = JobConfig.fromEnvironment(env("SLURM_PROCID", "5", "SLURM_NTASKS", "8", "SLURM_LOCALID", "1",
            "SLURM_STEP_NODELIST", "gpu[07-10,12],login1", "SLURM_JOB_ID", "123456", "SLURM_STEP_ID", "0",
            "FABRICRPC_JOB_SECRET", SECRET), Map.of());
        assertEquals(5, c.rank());
        assertEquals(8, c.size());
        assertEquals(1, c.localRank());
        assertEquals("gpu07", c.coordinatorHost());
        assertTrue(c.coordinatorPort() >= 20000 && c.coordinatorPort() < 32000, "port " + c.coordinatorPort());
        assertEquals(JobConfig.Source.SLURM, c.source());
        // Same job step, same port on every rank; another step gets another port (almost always).
        JobConfig other = JobConfig.fromEnvironment(env("SLURM_PROCID", "0", "SLURM_NTASKS", "8",
            "SLURM_STEP_NODELIST", "gpu[07-10,12],login1", "SLURM_JOB_ID", "123456", "SLURM_STEP_ID", "0",
            "FABRICRPC_JOB_SECRET", SECRET), Map.of());
        assertEquals(c.coordinatorPort(), other.coordinatorPort());
    }

    @Test
    void slurmWithExplicitCoordinatorAndPort() {
        JobConfig c = JobConfig.fromEnvironment(env("SLURM_PROCID", "0", "SLURM_NTASKS", "2",
            "FABRICRPC_COORDINATOR", "head", "FABRICRPC_COORDINATOR_PORT", "7000", "FABRICRPC_JOB_SECRET", SECRET),
            Map.of());
        assertEquals("head", c.coordinatorHost());
        assertEquals(7000, c.coordinatorPort());
    }

    @Test
    void slurmHostLists() {
        assertEquals("node03", LaunchEnvironment.firstSlurmHost("node[03-05,9],gpu1"));
        assertEquals("a", LaunchEnvironment.firstSlurmHost("a,b[1-2]"));
        assertEquals("rack1-n01", LaunchEnvironment.firstSlurmHost("rack[1-2]-n[01-04]"));
        assertEquals("single", LaunchEnvironment.firstSlurmHost("single"));
        assertThrows(IllegalArgumentException.class, () -> LaunchEnvironment.firstSlurmHost("bad[1-2"));
    }

    @Test
    void openMpiOnOneNode() {
        JobConfig c = JobConfig.fromEnvironment(env("OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "3",
            "OMPI_COMM_WORLD_LOCAL_RANK", "1", "OMPI_COMM_WORLD_LOCAL_SIZE", "3", "PMIX_NAMESPACE", "prterun-x-77@1",
            "FABRICRPC_JOB_SECRET", SECRET), Map.of());
        assertEquals(1, c.rank());
        assertEquals(3, c.size());
        assertEquals(1, c.localRank());
        assertEquals("127.0.0.1", c.coordinatorHost());
        assertEquals(JobConfig.Source.OPEN_MPI, c.source());
    }

    @Test
    void openMpiAcrossNodesNeedsTheCoordinator() {
        IllegalArgumentException e = fails(env("OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "4",
            "OMPI_COMM_WORLD_LOCAL_SIZE", "2", "FABRICRPC_JOB_SECRET", SECRET), Map.of());
        assertTrue(e.getMessage().contains("FABRICRPC_COORDINATOR"), e.getMessage());
        JobConfig c = JobConfig.fromEnvironment(env("OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "4",
            "OMPI_COMM_WORLD_LOCAL_SIZE", "2", "FABRICRPC_COORDINATOR", "n1:7000", "FABRICRPC_JOB_SECRET", SECRET),
            Map.of());
        assertEquals("n1", c.coordinatorHost());
    }

    @Test
    void missingPiecesNameTheVariable() {
        assertTrue(fails(env("FABRICRPC_JOB_SECRET", SECRET), Map.of()).getMessage().contains("FABRICRPC_RANK"));
        assertTrue(fails(env("FABRICRPC_RANK", "0", "FABRICRPC_COORDINATOR", "h:1", "FABRICRPC_JOB_SECRET", SECRET),
            Map.of()).getMessage().contains("FABRICRPC_SIZE"));
        assertTrue(fails(env("FABRICRPC_RANK", "0", "FABRICRPC_SIZE", "2", "FABRICRPC_JOB_SECRET", SECRET), Map.of())
            .getMessage().contains("FABRICRPC_COORDINATOR"));
        assertTrue(fails(env("FABRICRPC_RANK", "0", "FABRICRPC_SIZE", "2", "FABRICRPC_COORDINATOR", "h"), Map.of())
            .getMessage().contains("FABRICRPC_COORDINATOR_PORT"));
        IllegalArgumentException noSecret = fails(env("FABRICRPC_RANK", "0", "FABRICRPC_SIZE", "2",
            "FABRICRPC_COORDINATOR", "h:1"), Map.of());
        assertTrue(noSecret.getMessage().contains("FABRICRPC_JOB_SECRET")
            && noSecret.getMessage().contains("FABRICRPC_JOB_SECRET_FILE"), noSecret.getMessage());
        assertTrue(fails(env("FABRICRPC_RANK", "x", "FABRICRPC_SIZE", "2", "FABRICRPC_COORDINATOR", "h:1",
            "FABRICRPC_JOB_SECRET", SECRET), Map.of()).getMessage().contains("FABRICRPC_RANK='x'"));
        assertTrue(fails(env("SLURM_PROCID", "0", "FABRICRPC_JOB_SECRET", SECRET), Map.of())
            .getMessage().contains("SLURM_NPROCS"));
        assertTrue(fails(env("FABRICRPC_RANK", "2", "FABRICRPC_SIZE", "2", "FABRICRPC_COORDINATOR", "h:1",
            "FABRICRPC_JOB_SECRET", SECRET), Map.of()).getMessage().contains("FABRICRPC_RANK='2': rank must be in [0, 2)"));
        assertTrue(fails(env("FABRICRPC_RANK", "0", "FABRICRPC_SIZE", "2", "FABRICRPC_COORDINATOR", "h:1",
            "FABRICRPC_JOB_SECRET", "short"), Map.of()).getMessage().contains("at least 16"));
    }

    @Test
    void secretFromFileAndNeverFromASystemProperty(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("secret");
        Files.writeString(file, SECRET + "\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        Map<String, String> base = env("FABRICRPC_RANK", "0", "FABRICRPC_SIZE", "1", "FABRICRPC_COORDINATOR",
            "127.0.0.1:0");
        Map<String, String> withFile = new HashMap<>(base);
        withFile.put("FABRICRPC_JOB_SECRET_FILE", file.toString());
        assertArrayEquals(SECRET.getBytes(StandardCharsets.UTF_8),
            JobConfig.fromEnvironment(withFile, Map.of()).jobSecret());

        IllegalArgumentException e = fails(base, Map.of("fabricrpc.job.secret", SECRET));
        assertTrue(e.getMessage().contains("process list"), e.getMessage());
        assertFalse(e.getMessage().contains(SECRET));

        Map<String, String> missingFile = new HashMap<>(base);
        missingFile.put("FABRICRPC_JOB_SECRET_FILE", dir.resolve("nope").toString());
        assertTrue(fails(missingFile, Map.of()).getMessage().contains("FABRICRPC_JOB_SECRET_FILE"));
    }

    @Test
    void builderValidation() {
        JobConfig.Builder b = JobConfig.builder().rank(1).size(2).coordinator("127.0.0.1", 0).jobSecret(SECRET);
        assertTrue(assertThrows(IllegalArgumentException.class, b::build).getMessage().contains("only valid for rank 0"));
        b.coordinator("127.0.0.1", 7000).heartbeatInterval(JobConfig.DEFAULT_FAILURE_TIMEOUT.dividedBy(2).plusMillis(1));
        assertTrue(assertThrows(IllegalArgumentException.class, b::build).getMessage()
            .contains("at least twice the heartbeat"));
    }

    @Test
    void threadIdEncoding() {
        ThreadId t = new ThreadId(70000, 5);
        assertEquals(t, ThreadId.fromLong(t.toLong()));
        assertEquals(70000, ThreadId.rankOf(t.toLong()));
        assertEquals(5, ThreadId.threadIndexOf(t.toLong()));
        assertEquals(70000 * 8 + 5, t.globalIndex(8));
        assertThrows(IllegalArgumentException.class, () -> new ThreadId(-1, 0));
        assertThrows(IllegalArgumentException.class, () -> t.globalIndex(5));
    }
}
