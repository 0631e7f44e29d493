package io.fabricrpc.doctor;

import static io.fabricrpc.doctor.FakeHost.ALL_FLAGS;
import static io.fabricrpc.doctor.FakeHost.host;
import static io.fabricrpc.doctor.FakeHost.limits;
import static io.fabricrpc.doctor.FakeHost.write;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.JobConfig;
import io.fabricrpc.api.SerializationRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JoinChecksTest {
    private static final String USER = new com.sun.security.auth.module.UnixSystem().getUsername();

    @TempDir
    Path root;
    @TempDir
    Path shm;

    private FabricConfig config(String transport) {
        JobConfig job = JobConfig.builder().rank(0).size(4).threadsPerProcess(2).coordinator("127.0.0.1", 7000)
                .jobSecret("0123456789abcdef0123".getBytes(StandardCharsets.UTF_8)).build();
        return FabricConfig.of(job, SerializationRegistry.builder().build())
                .withTransport(Map.of("fabric.transport", transport, "shm.dir", shm.toString()));
    }

    @Test
    void aHealthyShmMachinePasses() {
        List<CheckResult> results = assertDoesNotThrow(() -> JoinChecks.verify(config("shm"),
                host(root, ALL_FLAGS, 1L << 30, 1L << 30, USER)));
        assertEquals(List.of("jvm-flags", "shm-dir", "shm-space"), results.stream().map(CheckResult::name).toList());
    }

    @Test
    void theMachineRunningTheTestsPassesForTheDefaultShmDir() {
        // What the runtime will call: the real host, the default /dev/shm, this JVM's flags (the pom's argLine).
        assumeTrue(Files.isDirectory(Path.of("/dev/shm")), "needs /dev/shm");
        FabricConfig defaults = config("shm").withTransport(Map.of("fabric.transport", "shm"));
        assertEquals(Status.OK, JoinChecks.verify(defaults).getFirst().status());
    }

    @Test
    void aWorldReadableShmDirectoryFailsTheJoinWithTheFix() throws Exception {
        Path dir = Files.createDirectory(shm.resolve("fabricrpc-" + USER));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        JoinCheckException e = assertThrows(JoinCheckException.class, () -> JoinChecks.verify(config("shm"),
                host(root, ALL_FLAGS, 1L << 30, 1L << 30, USER)));
        assertTrue(e.getMessage().contains("chmod 700 " + dir), e.getMessage());
        assertTrue(e.getMessage().contains("fabricrpc doctor"), e.getMessage());
        assertEquals("shm-dir", e.failures().getFirst().name());
    }

    @Test
    void aLowMemlockLimitFailsAnRdmaJoinAndMissingExportsAreNamed() {
        write(root, "/proc/self/limits", limits("4096", "4096"));
        write(root, "/proc/self/status", "CapEff:\t0000000000000000\n");
        JvmView noExports = new JvmView(25, "25", true, false, false, "allow");
        JoinCheckException e = assertThrows(JoinCheckException.class, () -> JoinChecks.verify(config("rdma"),
                host(root, noExports, 1L << 30, 1L << 30, USER)));
        assertEquals(List.of("jvm-flags", "memlock"), e.failures().stream().map(CheckResult::name).toList());
        assertTrue(e.getMessage().contains("ulimit -l unlimited"), e.getMessage());
        assertTrue(e.getMessage().contains("--add-exports=java.base/sun.nio.ch=ALL-UNNAMED"), e.getMessage());
    }

    @Test
    void aMissingShmDirFailsTheJoin() {
        FabricConfig missing = config("shm").withTransport(Map.of("shm.dir", shm.resolve("gone").toString()));
        JoinCheckException e = assertThrows(JoinCheckException.class, () -> JoinChecks.verify(missing,
                host(root, ALL_FLAGS, 1L << 30, 1L << 30, USER)));
        assertTrue(e.getMessage().contains("does not exist"), e.getMessage());
    }

    @Test
    void aFullShmDirFailsAHybridJoinButAnUnknownTransportOnlyChecksFlags() {
        write(root, "/proc/self/limits", limits("unlimited", "unlimited"));
        assertThrows(JoinCheckException.class, () -> JoinChecks.verify(config("hybrid"),
                host(root, ALL_FLAGS, 1L << 30, 0, USER)));
        List<CheckResult> results = JoinChecks.verify(config("scrambling"), host(root, ALL_FLAGS, 1L << 30, 0, USER));
        assertEquals(List.of("jvm-flags"), results.stream().map(CheckResult::name).toList());
    }
}
