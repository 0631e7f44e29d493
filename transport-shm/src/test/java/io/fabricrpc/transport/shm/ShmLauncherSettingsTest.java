package io.fabricrpc.transport.shm;

import static org.junit.jupiter.api.Assertions.*;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.SerializationRegistry;
import io.fabricrpc.fabric.LocalLauncher;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The launching JVM's fabric settings reach the ranks through the builder as through the command line. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ShmLauncherSettingsTest {

    /** Joins a job with the settings of its JVM and says which transport it runs on. */
    public static final class Rank {
        public static void main(String[] args) {
            SerializationRegistry registry = SerializationRegistry.builder().build();
            try (Fabric fabric = Fabric.join(FabricConfig.fromEnvironment(registry))) {
                System.out.println("JOINED rank " + fabric.rank() + " transport "
                        + System.getProperty("fabric.transport", "shm"));
            }
        }
    }

    @Test
    void theBuilderPassesTheLaunchingJvmsTransportOn() {
        System.setProperty("fabric.transport", "bogus");
        LocalLauncher job;
        try {
            job = LocalLauncher.builder(Rank.class).processes(2).forwardOutput(false).start();
        } finally {
            System.clearProperty("fabric.transport");
        }
        try (job) {
            LocalLauncher.LaunchException e = assertThrows(LocalLauncher.LaunchException.class,
                    () -> job.awaitAll(Duration.ofSeconds(60)));
            assertTrue(job.processes().stream().flatMap(p -> p.output().stream())
                    .anyMatch(l -> l.contains("no transport of kind 'bogus'")), e.getMessage());
        }
    }

    @Test
    void theBuilderStillRunsAJobOnTheDefaultTransport() {
        try (LocalLauncher job = LocalLauncher.builder(Rank.class).processes(2).forwardOutput(false).start()) {
            job.awaitAll(Duration.ofSeconds(60));
            for (LocalLauncher.RankProcess p : job.processes()) {
                p.awaitLine(l -> l.equals("JOINED rank " + p.rank() + " transport shm"), Duration.ZERO);
            }
        }
    }

    @Test
    void theCommandLineRefusesTheSameTransport() throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(LocalLauncher.REQUIRED_JVM_FLAGS);
        cmd.addAll(List.of("-Dfabric.transport=bogus", "-cp", System.getProperty("java.class.path"),
                LocalLauncher.class.getName(), "-n", "2", "--timeout", "60", Rank.class.getName()));
        Path log = Files.createTempFile("launcher", ".log");
        Process launcher = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            assertTrue(launcher.waitFor(90, TimeUnit.SECONDS), "the launcher did not exit");
        } finally {
            launcher.destroyForcibly();
        }
        String text = Files.readString(log, StandardCharsets.UTF_8);
        Files.delete(log);
        assertEquals(1, launcher.exitValue(), text);
        assertTrue(text.contains("no transport of kind 'bogus'"), text);
    }
}
