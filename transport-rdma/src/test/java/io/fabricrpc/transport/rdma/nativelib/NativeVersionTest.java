package io.fabricrpc.transport.rdma.nativelib;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The version handshake refuses a library without fabricrpc's stamp, naming the version it expected. */
class NativeVersionTest {
    private static final Path UNSTAMPED = Path.of("/usr/lib/x86_64-linux-gnu/libibverbs.so.1");

    @Test
    void aLibraryWithoutTheStampIsRefusedWithBothSidesNamed() throws Exception {
        assumeTrue(Files.isReadable(UNSTAMPED), "needs libibverbs.so.1 as a library that lacks the stamp");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(List.of(java, "--enable-native-access=ALL-UNNAMED",
                "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED", "-Dfabricrpc.disni.library=" + UNSTAMPED,
                "-cp", System.getProperty("java.class.path"), NativeVersionProbe.class.getName()))
                .redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "probe did not finish");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(out.contains("REFUSED") && out.contains("no fabricrpc version stamp")
                && out.contains("expects version " + DisniNativeLibrary.NATIVE_VERSION)
                && out.contains(UNSTAMPED.toString()), out);
    }
}
