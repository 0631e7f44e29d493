package io.fabricrpc.fabric;

import static org.junit.jupiter.api.Assertions.*;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Ranks get the JVM flags Agrona needs on JDK 25 even when the caller passes none. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LocalLauncherFlagsTest {

    /** A rank that touches Agrona's Unsafe access (IllegalAccessError without the exports) and prints its flags. */
    public static final class Rank {
        public static void main(String[] args) {
            UnsafeBuffer buffer = new UnsafeBuffer(new byte[8]);
            buffer.putLong(0, 42);
            System.out.println("AGRONA_OK " + buffer.getLong(0));
            System.out.println("FLAGS " + String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()));
        }
    }

    @Test
    void ranksStartWithTheRequiredFlagsOnceEach() {
        try (LocalLauncher job = LocalLauncher.builder(Rank.class).processes(2).forwardOutput(false)
            // A caller passing the required flags again (as inheritedJvmFlags() does) must not repeat them.
            .jvmArgs("-XX:TieredStopAtLevel=1", "-Xmx32m", LocalLauncher.REQUIRED_JVM_FLAGS.getFirst())
            .start()) {
            job.awaitAll(Duration.ofSeconds(30));
            for (LocalLauncher.RankProcess p : job.processes()) {
                assertEquals(0, p.exitCode(), job.report());
                p.awaitLine(l -> l.equals("AGRONA_OK 42"), Duration.ZERO);
                List<String> flags = List.of(p.awaitLine(l -> l.startsWith("FLAGS "), Duration.ZERO)
                    .substring("FLAGS ".length()).split(" "));
                for (String required : LocalLauncher.REQUIRED_JVM_FLAGS) {
                    assertEquals(1, Collections.frequency(flags, required), required + " in " + flags);
                }
                assertTrue(flags.contains("-XX:TieredStopAtLevel=1"), flags.toString());
            }
        }
    }
}
