package io.fabricrpc.invocation;

import io.fabricrpc.fabric.LocalLauncher;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The root pom's JIT directives (fabricrpc.jvm.flags, which surefire runs this JVM with) name methods that exist: a
 * renamed entry point would otherwise leave a directive that silently matches nothing. Ranks inherit them.
 */
class JitDirectivesTest {
    private static final String COMMAND = "-XX:CompileCommand=";
    private static final String INLINE = COMMAND + "inline,";
    private static final String TIER3_DELAY = "-XX:Tier3DelayOn=";

    @Test
    void everyInlineDirectiveNamesAnExistingMethodAndQuietComesFirst() throws Exception {
        List<String> commands = ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .filter(a -> a.startsWith(COMMAND)).toList();
        List<String> inlined = commands.stream().filter(a -> a.startsWith(INLINE)).toList();
        assertFalse(inlined.isEmpty(), "no inlining directives in this JVM's flags " + commands);
        assertEquals(COMMAND + "quiet", commands.getFirst(), "quiet must come first, or each directive prints a line");
        for (String directive : inlined) {
            String[] target = directive.substring(INLINE.length()).split("::");
            assertEquals(2, target.length, directive);
            if (target[0].endsWith("*")) {
                // Generated hidden classes, named by prefix: CapturedCallTest checks the prefixes are theirs.
                assertEquals("*", target[1], directive);
                assertTrue(target[0].startsWith("io.fabricrpc.serialization.Generated"), directive);
                continue;
            }
            Class<?> type = Class.forName(target[0]);
            assertTrue(Arrays.stream(type.getDeclaredMethods()).anyMatch(m -> m.getName().equals(target[1])),
                    directive + ": " + type.getName() + " has no method " + target[1]);
        }
        assertEquals(commands, LocalLauncher.inheritedJvmFlags().stream().filter(a -> a.startsWith(COMMAND)).toList(),
                "ranks get the directives, in order");
    }

    /** Tier 2 first let the receiver's generated invoker stick at tier 3, never reaching C2 (root pom comment). */
    @Test
    void ranksCompileAtTier3WhileC2IsBusy() {
        List<String> flags = ManagementFactory.getRuntimeMXBean().getInputArguments();
        List<String> delay = flags.stream().filter(a -> a.startsWith(TIER3_DELAY)).toList();
        assertEquals(1, delay.size(), "one Tier3DelayOn in this JVM's flags " + flags);
        assertTrue(Long.parseLong(delay.getFirst().substring(TIER3_DELAY.length())) >= 100_000, delay.getFirst());
        assertTrue(LocalLauncher.inheritedJvmFlags().containsAll(delay), "ranks get " + delay);
    }
}
