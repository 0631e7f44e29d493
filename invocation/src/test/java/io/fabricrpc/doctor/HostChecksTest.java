package io.fabricrpc.doctor;

import static io.fabricrpc.doctor.FakeHost.ALL_FLAGS;
import static io.fabricrpc.doctor.FakeHost.context;
import static io.fabricrpc.doctor.FakeHost.host;
import static io.fabricrpc.doctor.FakeHost.limits;
import static io.fabricrpc.doctor.FakeHost.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HostChecksTest {
    private static final long GIB = 1L << 30;
    private static final String USER = new com.sun.security.auth.module.UnixSystem().getUsername();

    @TempDir
    Path root;
    @TempDir
    Path shm;

    private Host roomy() {
        return host(root, ALL_FLAGS, 8 * GIB, 8 * GIB, USER);
    }

    @Test
    void parsesTheMemlockRowOfProcLimits() {
        assertEquals(new ProcFiles.Limit(65536, 131072),
                ProcFiles.limit(limits("65536", "131072"), "Max locked memory").orElseThrow());
        ProcFiles.Limit unlimited = ProcFiles.limit(limits("unlimited", "unlimited"), "Max locked memory").orElseThrow();
        assertTrue(unlimited.softUnlimited());
        assertTrue(ProcFiles.limit("garbage\nMax locked memory  x y bytes\n", "Max locked memory").isEmpty());
    }

    @Test
    void memlockFailsBelowWhatRegistrationNeedsAndNamesTheFix() {
        write(root, "/proc/self/limits", limits("65536", "65536"));
        write(root, "/proc/self/status", "Name:\tjava\nCapEff:\t0000000000000000\n");
        CheckResult r = HostChecks.memlock(context("rdma", shm, roomy()));
        assertEquals(Status.FAIL, r.status(), r.toString());
        assertTrue(r.observed().contains("64 KiB"), r.observed());
        assertTrue(r.fix().contains("ulimit -l unlimited") && r.fix().contains("--ulimit memlock=-1")
                && r.fix().contains("IPC_LOCK") && r.fix().contains("limits.conf"), r.fix());
    }

    @Test
    void memlockIsOkWhenUnlimitedOrWithIpcLockAndSkippedForShm() {
        write(root, "/proc/self/limits", limits("unlimited", "unlimited"));
        assertEquals(Status.OK, HostChecks.memlock(context("rdma", shm, roomy())).status());
        write(root, "/proc/self/limits", limits("65536", "65536"));
        write(root, "/proc/self/status", "CapEff:\t0000000000004000\n");
        CheckResult withCap = HostChecks.memlock(context("hybrid", shm, roomy()));
        assertEquals(Status.OK, withCap.status());
        assertTrue(withCap.observed().contains("CAP_IPC_LOCK"), withCap.observed());
        assertEquals(Status.SKIP, HostChecks.memlock(context("shm", shm, roomy())).status());
    }

    @Test
    void memlockWarnsBetweenTheStartAndTheFullEstimate() {
        write(root, "/proc/self/limits", limits(String.valueOf(1 << 20), String.valueOf(1 << 20)));
        write(root, "/proc/self/status", "CapEff:\t0000000000000000\n");
        assertEquals(Status.WARN, HostChecks.memlock(context("rdma", shm, roomy())).status());
    }

    @Test
    void tinyTmpfsWarnsAndSaysHowToEnlargeIt() {
        CheckResult r = HostChecks.shmSpace(context("shm", shm, host(root, ALL_FLAGS, 64L << 20, 60L << 20, USER)));
        assertEquals(Status.WARN, r.status(), r.toString());
        assertTrue(r.fix().contains("--shm-size"), r.fix());
        assertTrue(r.observed().contains("60 MiB free of 64 MiB"), r.observed());
    }

    @Test
    void fullTmpfsFails() {
        CheckResult r = HostChecks.shmSpace(context("shm", shm, host(root, ALL_FLAGS, 64L << 20, 4096, USER)));
        assertEquals(Status.FAIL, r.status(), r.toString());
    }

    @Test
    void missingShmDirFails() {
        CheckResult r = HostChecks.shmDirectory(context("shm", shm.resolve("nope"), roomy()));
        assertEquals(Status.FAIL, r.status());
        assertEquals(Status.SKIP, HostChecks.shmSpace(context("shm", shm.resolve("nope"), roomy())).status());
        assertTrue(r.fix().contains("shm.dir"), r.fix());
    }

    @Test
    void shmDirectoryWithAWrongModeFailsWithChmod() throws Exception {
        Path dir = Files.createDirectory(shm.resolve("fabricrpc-" + USER),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x")); // umask-proof
        CheckResult r = HostChecks.shmDirectory(context("shm", shm, roomy()));
        assertEquals(Status.FAIL, r.status(), r.toString());
        assertEquals("chmod 700 " + dir, r.fix());
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        assertEquals(Status.OK, HostChecks.shmDirectory(context("shm", shm, roomy())).status());
    }

    @Test
    void shmDirectoryOwnedBySomeoneElseFails() throws Exception {
        // The directory is named after "alice" but created (owned) by the user running the test.
        Files.createDirectory(shm.resolve("fabricrpc-alice"));
        CheckResult r = HostChecks.shmDirectory(context("shm", shm, host(root, ALL_FLAGS, GIB, GIB, "alice")));
        assertEquals(Status.FAIL, r.status(), r.toString());
        assertTrue(r.observed().contains("not by alice"), r.observed());
    }

    @Test
    void absentShmDirectoryIsFineAndRdmaSkipsIt() {
        assertEquals(Status.OK, HostChecks.shmDirectory(context("shm", shm, roomy())).status());
        assertEquals(Status.SKIP, HostChecks.shmDirectory(context("rdma", shm, roomy())).status());
    }

    @Test
    void mountOptionsComeFromMountinfoAndNoexecIsFine() throws Exception {
        String real = shm.toRealPath().toString();
        write(root, "/proc/self/mountinfo", "22 1 0:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
                + "25 22 0:23 / " + real + " rw,nosuid,nodev,noexec - tmpfs tmpfs rw,size=65536k\n");
        CheckResult r = HostChecks.shmMount(context("shm", shm, roomy()));
        assertEquals(Status.OK, r.status(), r.toString());
        assertTrue(r.observed().contains("tmpfs") && r.observed().contains("noexec is fine"), r.observed());

        write(root, "/proc/self/mountinfo", "22 1 0:1 / / rw,relatime - ext4 /dev/sda1 rw\n");
        assertEquals(Status.WARN, HostChecks.shmMount(context("shm", shm, roomy())).status());
        write(root, "/proc/self/mountinfo", "25 22 0:23 / " + real + " ro,nosuid - tmpfs tmpfs ro\n");
        assertEquals(Status.FAIL, HostChecks.shmMount(context("shm", shm, roomy())).status());
    }

    @Test
    void mountinfoEscapesAreDecoded() {
        String text = "30 25 0:27 / /mnt/my\\040shm rw - tmpfs tmpfs rw\n";
        assertEquals("/mnt/my shm", ProcFiles.mountOf(text, "/mnt/my shm/x").orElseThrow().mountPoint());
    }

    @Test
    void missingExportsFailAndSoftFlagsWarn() {
        Host noMisc = host(root, new JvmView(25, "25", true, false, true, "allow"), GIB, GIB, USER);
        CheckResult r = HostChecks.jvmFlags(context("shm", shm, noMisc));
        assertEquals(Status.FAIL, r.status());
        assertTrue(r.observed().contains("jdk.internal.misc"), r.observed());
        assertTrue(r.fix().contains(HostChecks.REQUIRED_FLAGS), r.fix());

        Host noNio = host(root, new JvmView(25, "25", true, true, false, "allow"), GIB, GIB, USER);
        assertEquals(Status.WARN, HostChecks.jvmFlags(context("shm", shm, noNio)).status());
        assertEquals(Status.FAIL, HostChecks.jvmFlags(context("rdma", shm, noNio)).status());

        Host soft = host(root, new JvmView(25, "25", false, true, true, null), GIB, GIB, USER);
        CheckResult warn = HostChecks.jvmFlags(context("rdma", shm, soft));
        assertEquals(Status.WARN, warn.status());
        assertTrue(warn.observed().contains("--enable-native-access") && warn.observed().contains("unsafe"));
        assertEquals(Status.OK, HostChecks.jvmFlags(context("rdma", shm, roomy())).status());
    }

    @Test
    void oldJdkFails() {
        Host old = host(root, new JvmView(21, "21.0.5", true, true, true, "allow"), GIB, GIB, USER);
        assertEquals(Status.FAIL, HostChecks.jdk(context("shm", shm, old)).status());
        assertEquals(Status.OK, HostChecks.jdk(context("shm", shm, roomy())).status());
    }

    @Test
    void theJvmRunningTheTestsHasTheFlagsOfThePom() {
        // Surefire's argLine is the root pom's fabricrpc.jvm.flags: this JVM must pass.
        assertEquals(Status.OK, HostChecks.jvmFlags(context("rdma", shm, Host.system())).status());
    }

    @Test
    void procFilesOfThisMachineAreReadWhole() {
        // procfs reports size 0; a reader trusting the size gets a truncated file.
        Host real = Host.system();
        assertTrue(real.read("/proc/self/limits").orElseThrow().contains("Max locked memory"));
        assertTrue(ProcFiles.limit(real.read("/proc/self/limits").orElseThrow(), "Max locked memory").isPresent());
        assertTrue(Long.parseLong(real.read("/proc/sys/vm/max_map_count").orElseThrow().trim()) >= 1024);
    }

    @Test
    void lowMaxMapCountWarnsAndHugepagesAreInformational() {
        write(root, "/proc/sys/vm/max_map_count", "1024\n");
        assertEquals(Status.WARN, HostChecks.maxMapCount(context("shm", shm, roomy())).status());
        write(root, "/proc/sys/vm/max_map_count", "65530\n");
        assertEquals(Status.OK, HostChecks.maxMapCount(context("shm", shm, roomy())).status());
        write(root, "/proc/meminfo", "MemTotal: 100 kB\nHugePages_Total:       0\nHugePages_Free:        0\n"
                + "Hugepagesize:       2048 kB\n");
        CheckResult huge = HostChecks.hugepages(context("rdma", shm, roomy()));
        assertEquals(Status.OK, huge.status());
        assertTrue(huge.observed().contains("0 of 0 hugepages of 2 MiB"), huge.observed());
        assertEquals(Status.SKIP, HostChecks.hugepages(context("shm", shm, roomy())).status());
    }
}
