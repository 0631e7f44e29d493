package io.fabricrpc.transport.shm;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.fabric.LocalLauncher;
import io.fabricrpc.api.SerializationRegistry;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * After a real join, the JVM's compiler directive stack holds fabricrpc's force-inlining directive (read as
 * {@code jcmd <pid> Compiler.directives_print} reads it); with {@code -Dfabric.jit.directives=false} it does not.
 * Each case in a fresh JVM, since the first join of a JVM decides.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ShmJitDirectivesTest {
    private static final String MARKER = "+io/fabricrpc/invocation/FabricRuntime.call";

    /** One rank: joins over shared memory and prints whether the directive is installed. */
    public static final class Rank {
        public static void main(String[] args) throws Exception {
            try (Fabric fabric = Fabric.join(FabricConfig.fromEnvironment(SerializationRegistry.builder().build()))) {
                Object stack = ManagementFactory.getPlatformMBeanServer().invoke(
                        new ObjectName("com.sun.management:type=DiagnosticCommand"), "compilerDirectivesPrint",
                        new Object[] {new String[0]}, new String[] {String[].class.getName()});
                System.out.println("RANK " + fabric.rank() + " DIRECTIVES " + stack.toString().contains(MARKER));
            }
        }
    }

    @Test
    void aJoinInstallsTheDirectivesUnlessTheKeySaysFalse() {
        for (String key : List.of("", "-Dfabric.jit.directives=false")) {
            LocalLauncher.Builder builder = LocalLauncher.builder(Rank.class).processes(2).forwardOutput(false);
            if (!key.isEmpty()) {
                builder.jvmArgs(key);
            }
            try (LocalLauncher job = builder.start()) {
                job.awaitAll(Duration.ofSeconds(90));
                for (LocalLauncher.RankProcess p : job.processes()) {
                    String expected = "RANK " + p.rank() + " DIRECTIVES " + key.isEmpty();
                    assertTrue(p.output().contains(expected), key + ": no line '" + expected + "' in " + p.output());
                }
            }
        }
    }
}
