package io.fabricrpc.transport.rdma.verbs;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabricrpc.transport.rdma.RdmaTestSupport;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

/**
 * A memlock limit too low for the registration gives an exception that states the limit and how to raise it.
 * Runs a child JVM with {@code ulimit -l 64} and without CAP_IPC_LOCK (which otherwise exempts root).
 */
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class MemlockLimitTest {

    /** The JVM's own fatal-error banner: the probe died before it could report, which is not the contract tested. */
    private static final String JVM_CRASH = "A fatal error has been detected by the Java Runtime Environment";

    @Test
    void registrationBeyondTheMemlockLimitSaysHowToRaiseIt() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/setpriv")), "needs setpriv (util-linux)");
        String out = runProbe();
        if (out.contains(JVM_CRASH)) {
            // The guest's CPU is emulated (QEMU TCG); a child JVM has crashed there once, while reading its class
            // path. Say so, and run the probe once more: a second crash still fails the test.
            System.out.println("[probe] the probe JVM crashed; running it once more. Its output:\n" + out);
            out = runProbe();
        }
        System.out.println("[probe] " + out.trim());
        assertTrue(out.contains("FAILED ibv_reg_mr"), out);
        assertTrue(out.contains("RLIMIT_MEMLOCK") && out.contains("65536 bytes") && out.contains("ulimit -l unlimited"), out);
    }

    private static String runProbe() throws Exception {
        InetSocketAddress address = RdmaTestSupport.nextAddress();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String errorFile = Path.of(System.getProperty("java.io.tmpdir"), "memlock-probe-hs_err_pid%p.log").toString();
        String cmd = "ulimit -l 64 && exec setpriv --inh-caps=-ipc_lock --bounding-set=-ipc_lock " + java
                + " --enable-native-access=ALL-UNNAMED " + RdmaTestSupport.JVM_FLAGS_EXPORTS + " -Xmx128m"
                + " -XX:ErrorFile=" + errorFile + " -cp '" + System.getProperty("java.class.path") + "' "
                + MemlockProbe.class.getName() + " " + address.getAddress().getHostAddress() + " " + address.getPort();
        Path log = Files.createTempFile("memlock-probe", ".log");
        try {
            // Output to a file, so that a probe that hangs ends the wait at the bound instead of blocking a read.
            Process p = new ProcessBuilder(List.of("bash", "-c", cmd)).redirectErrorStream(true)
                    .redirectOutput(log.toFile()).start();
            boolean finished = p.waitFor(120, TimeUnit.SECONDS);
            if (!finished) {
                p.destroyForcibly();
            }
            String out = new String(Files.readAllBytes(log), StandardCharsets.UTF_8);
            assertTrue(finished, "probe did not finish in 120 s; its output so far:\n" + out);
            return out;
        } finally {
            Files.deleteIfExists(log);
        }
    }
}
