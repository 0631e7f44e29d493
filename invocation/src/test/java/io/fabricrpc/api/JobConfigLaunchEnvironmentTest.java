package io.fabricrpc.api;


import static io.fabricrpc.api.JobConfigTest.SECRET;
import static io.fabricrpc.api.JobConfigTest.env;
import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Rank, size and threads from the launcher's environment (explicit variables, then Open MPI, then Slurm), messages
 * that name the variable and its value, and the job secret file's permissions.
 */
class JobConfigLaunchEnvironmentTest {

    /** What mpirun sets for rank 2 of 3 on one node (Open MPI 4.1), plus the secret. */
    static Map<String, String> mpirun(String rank, String size) {
        return env("OMPI_COMM_WORLD_RANK", rank, "OMPI_COMM_WORLD_SIZE", size, "OMPI_COMM_WORLD_LOCAL_RANK", rank,
            "OMPI_COMM_WORLD_LOCAL_SIZE", size, "PMIX_NAMESPACE", "1489960961", "FABRICRPC_JOB_SECRET", SECRET);
    }

    static Map<String, String> srun(String rank, String size) {
        return env("SLURM_PROCID", rank, "SLURM_NTASKS", size, "SLURM_LOCALID", rank, "SLURM_STEP_NODELIST",
            "node[01-02]", "SLURM_JOB_ID", "4711", "SLURM_STEP_ID", "0", "FABRICRPC_JOB_SECRET", SECRET);
    }

    static String message(Map<String, String> env, Map<String, String> props) {
        return assertThrows(IllegalArgumentException.class, () -> JobConfig.fromEnvironment(env, props)).getMessage();
    }

    @Test
    void openMpiGivesRankSizeAndALoopbackCoordinatorWhenNoExplicitRank() {
        JobConfig c = JobConfig.fromEnvironment(mpirun("2", "3"), Map.of());
        assertEquals(JobConfig.Source.OPEN_MPI, c.source());
        assertEquals(2, c.rank());
        assertEquals(3, c.size());
        assertEquals(2, c.localRank());
        assertEquals("127.0.0.1", c.coordinatorHost());
        // Every rank of one mpirun derives the same port from the namespace they share.
        assertEquals(c.coordinatorPort(), JobConfig.fromEnvironment(mpirun("0", "3"), Map.of()).coordinatorPort());
        assertTrue(c.coordinatorPort() >= 20000 && c.coordinatorPort() < 32000, "port " + c.coordinatorPort());
    }

    @Test
    void explicitVariablesBeatOpenMpiAndSlurm() {
        Map<String, String> both = new HashMap<>(mpirun("2", "3"));
        both.putAll(srun("1", "2"));
        both.putAll(env("FABRICRPC_RANK", "0", "FABRICRPC_SIZE", "5", "FABRICRPC_COORDINATOR", "h:7000"));
        JobConfig c = JobConfig.fromEnvironment(both, Map.of());
        assertEquals(JobConfig.Source.EXPLICIT, c.source());
        assertEquals(0, c.rank());
        assertEquals(5, c.size());
        assertEquals(7000, c.coordinatorPort());
    }

    @Test
    void openMpiBeatsSlurmVariablesInheritedFromTheAllocation() {
        // mpirun inside sbatch: the ranks of node 0 all inherit SLURM_PROCID=0 from the daemon srun started.
        Map<String, String> both = new HashMap<>(srun("0", "2"));
        both.putAll(mpirun("2", "3"));
        JobConfig c = JobConfig.fromEnvironment(both, Map.of());
        assertEquals(JobConfig.Source.OPEN_MPI, c.source());
        assertEquals(2, c.rank());
        assertEquals(3, c.size());
    }

    @Test
    void slurmWhenNothingElse() {
        JobConfig c = JobConfig.fromEnvironment(srun("1", "2"), Map.of());
        assertEquals(JobConfig.Source.SLURM, c.source());
        assertEquals(1, c.rank());
        assertEquals(2, c.size());
        assertEquals("node01", c.coordinatorHost());
    }

    @Test
    void threadsDefaultToOneOrSlurmsCpusPerTaskAndTheVariableWins() {
        assertEquals(1, JobConfig.fromEnvironment(mpirun("0", "3"), Map.of()).threadsPerProcess());
        assertEquals(1, JobConfig.fromEnvironment(srun("0", "2"), Map.of()).threadsPerProcess());

        Map<String, String> cpus = new HashMap<>(srun("0", "2"));
        cpus.put("SLURM_CPUS_PER_TASK", "4");
        assertEquals(4, JobConfig.fromEnvironment(cpus, Map.of()).threadsPerProcess());
        cpus.put("FABRICRPC_THREADS", "2");
        assertEquals(2, JobConfig.fromEnvironment(cpus, Map.of()).threadsPerProcess());
        assertEquals(3, JobConfig.fromEnvironment(cpus, Map.of("fabricrpc.threads", "3")).threadsPerProcess());

        // Open MPI has no job-wide CPU count; a SLURM_CPUS_PER_TASK inherited by mpirun's ranks is not used.
        Map<String, String> mpiInSlurm = new HashMap<>(mpirun("0", "3"));
        mpiInSlurm.put("SLURM_CPUS_PER_TASK", "4");
        assertEquals(1, JobConfig.fromEnvironment(mpiInSlurm, Map.of()).threadsPerProcess());
    }

    @Test
    void badValuesNameTheVariableAndTheValue() {
        assertTrue(message(mpirun("x", "3"), Map.of()).contains("OMPI_COMM_WORLD_RANK='x' is not an integer"));
        assertTrue(message(mpirun("1", "three"), Map.of()).contains("OMPI_COMM_WORLD_SIZE='three' is not an integer"));
        String outOfRange = message(mpirun("3", "3"), Map.of());
        assertTrue(outOfRange.contains("OMPI_COMM_WORLD_RANK='3'") && outOfRange.contains("OMPI_COMM_WORLD_SIZE=3"),
            outOfRange);
        assertTrue(message(srun("0", "0"), Map.of()).contains("SLURM_NTASKS='0': job size must be >= 1"));
        assertTrue(message(srun("-1", "2"), Map.of()).contains("SLURM_PROCID='-1'"));

        Map<String, String> threads = new HashMap<>(mpirun("0", "3"));
        threads.put("FABRICRPC_THREADS", "0");
        assertTrue(message(threads, Map.of()).contains("FABRICRPC_THREADS='0': threads per process must be >= 1"));
        threads.put("FABRICRPC_THREADS", "two");
        assertTrue(message(threads, Map.of()).contains("FABRICRPC_THREADS='two' is not an integer"));
        assertTrue(message(mpirun("0", "3"), Map.of("fabricrpc.threads", "-2")).contains("FABRICRPC_THREADS='-2'"));
        Map<String, String> cpus = new HashMap<>(srun("0", "2"));
        cpus.put("SLURM_CPUS_PER_TASK", "4(x2)");
        assertTrue(message(cpus, Map.of()).contains("SLURM_CPUS_PER_TASK='4(x2)' is not an integer"));
    }

    @Test
    void secretFileMustBeReadableByTheUserAlone(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("job.secret");
        Files.writeString(file, SECRET + "\n");
        Map<String, String> env = env("OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "1",
            "OMPI_COMM_WORLD_LOCAL_SIZE", "1", "PMIX_NAMESPACE", "n", "FABRICRPC_JOB_SECRET_FILE", file.toString());
        for (String mode : new String[] {"rw-r--r--", "rw-r-----", "rw----r--"}) {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(mode));
            String m = message(env, Map.of());
            assertTrue(m.contains("FABRICRPC_JOB_SECRET_FILE='" + file + "' is readable by group or others")
                && m.contains("chmod 600 " + file), mode + ": " + m);
            assertFalse(m.contains(SECRET));
        }
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("r--------"));
        assertTrue(JobConfig.fromEnvironment(env, Map.of()).hasJobSecret());
    }

    @Test
    void launchedAsRankUnderAnyLauncherOnly() {
        assertFalse(JobConfig.launchedAsRank(env("PATH", "/bin", "SLURM_JOB_ID", "4711"), Map.of()));
        assertTrue(JobConfig.launchedAsRank(env("FABRICRPC_RANK", "0"), Map.of()));
        assertTrue(JobConfig.launchedAsRank(Map.of(), Map.of("fabricrpc.rank", "0")));
        assertTrue(JobConfig.launchedAsRank(mpirun("1", "3"), Map.of()));
        assertTrue(JobConfig.launchedAsRank(srun("1", "2"), Map.of()));
    }
}
