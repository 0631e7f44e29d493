package io.fabricrpc.invocation;

import io.fabricrpc.fabric.LocalLauncher;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The compiler directives fabricrpc installs at join (jit-directives.json) name methods that exist (a renamed entry
 * point would otherwise leave a directive that silently matches nothing), this JVM takes them, and
 * {@code fabric.jit.directives=false} keeps them out. Transport modules test the same after a real join.
 */
class JitDirectivesTest {

    /** A fresh JVM: installs as a join does, prints the outcome and whether the directive stack has them. */
    public static final class Probe {
        public static void main(String[] args) throws Exception {
            System.out.println("OUTCOME " + JitDirectives.await(JitDirectives.installOnce(Map.of())));
            System.out.println("PRESENT " + JitDirectives.print().contains(JitDirectives.MARKER));
        }
    }

    @Test
    void everyInlinePatternNamesAnExistingMethod() throws Exception {
        List<String> patterns = JitDirectives.inlinePatterns();
        assertEquals(16, patterns.size(), patterns.toString());
        assertTrue(patterns.contains(JitDirectives.MARKER), patterns.toString());
        for (String pattern : patterns) {
            assertTrue(pattern.startsWith("+io/fabricrpc/") || pattern.startsWith("-io/fabricrpc/")
                    || pattern.startsWith("+jdk/internal/"), pattern);
            String[] target = pattern.substring(1).split("\\.");
            assertEquals(2, target.length, pattern);
            if (target[0].endsWith("*")) {
                if (pattern.startsWith("+jdk/")) { // a method of the JDK's segment implementations
                    Class<?> type = Class.forName("jdk.internal.foreign.NativeMemorySegmentImpl");
                    assertTrue(type.getName().replace('.', '/').startsWith(target[0].replace("*", "")), pattern);
                    assertTrue(Arrays.stream(type.getDeclaredMethods()).anyMatch(m -> m.getName().equals(target[1])),
                            pattern + ": " + type.getName() + " has no method " + target[1]);
                    continue;
                }
                // Generated hidden classes, named by prefix: CapturedCallTest checks the prefixes are theirs.
                assertEquals("*", target[1], pattern);
                assertTrue(target[0].startsWith("io/fabricrpc/serialization/Generated"), pattern);
                continue;
            }
            if (target[0].startsWith("io/fabricrpc/aggregation/")) {
                continue; // not on this module's class path: AggregationJitDirectivesTest checks it
            }
            JitDirectivePatterns.assertNamesExistingMethod(pattern);
        }
    }

    /**
     * The root pom's optional benchmark flags (fabricrpc.jit.flags) repeat the directives as CompileCommands for a
     * JVM that does not join: the two lists must name the same methods.
     */
    @Test
    void thePomsCompileCommandsRepeatEveryDirective() throws Exception {
        String pom = java.nio.file.Files.readString(java.nio.file.Path.of("..", "pom.xml"));
        java.util.regex.Matcher flags = java.util.regex.Pattern
                .compile("<fabricrpc.jit.flags>(.*)</fabricrpc.jit.flags>").matcher(pom);
        assertTrue(flags.find(), "no <fabricrpc.jit.flags> in the root pom");
        List<String> commands = Arrays.stream(flags.group(1).trim().split("\\s+"))
                .filter(f -> f.startsWith("-XX:CompileCommand=inline,") || f.startsWith("-XX:CompileCommand=dontinline,"))
                .map(f -> f.substring("-XX:CompileCommand=".length()))
                .sorted().toList();
        List<String> fromDirectives = JitDirectives.inlinePatterns().stream()
                .map(p -> (p.startsWith("+") ? "inline," : "dontinline,")
                        + p.substring(1, p.lastIndexOf('.')).replace('/', '.') + "::" + p.substring(p.lastIndexOf('.') + 1))
                .sorted().toList();
        assertEquals(fromDirectives, commands);
    }

    @Test
    void thisJvmTakesTheDirectivesWithEveryPattern() throws Exception {
        JitDirectives.Outcome outcome = JitDirectives.await(JitDirectives.installOnce(Map.of()));
        assertTrue(outcome == JitDirectives.Outcome.INSTALLED || outcome == JitDirectives.Outcome.ALREADY_PRESENT,
                outcome.toString());
        String stack = JitDirectives.print();
        for (String pattern : JitDirectives.inlinePatterns()) {
            assertTrue(stack.contains(pattern), pattern + " not in\n" + stack);
        }
        assertFalse(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .anyMatch(a -> a.startsWith("-XX:CompileCommand=")), "the tests run without JIT flags, as users do");
    }

    @Test
    void theKeyTurnsThemOff() {
        for (String value : List.of("true", "false")) {
            try (LocalLauncher job = LocalLauncher.builder(Probe.class).processes(1).forwardOutput(false)
                    .jvmArgs("-D" + JitDirectives.KEY + "=" + value).start()) {
                job.awaitAll(Duration.ofSeconds(60));
                LocalLauncher.RankProcess p = job.process(0);
                boolean on = value.equals("true");
                p.awaitLine(l -> l.equals("OUTCOME " + (on ? "INSTALLED" : "DISABLED")), Duration.ZERO);
                p.awaitLine(l -> l.equals("PRESENT " + on), Duration.ZERO);
            }
        }
    }
}
