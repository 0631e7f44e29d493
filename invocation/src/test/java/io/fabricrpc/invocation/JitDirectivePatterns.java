package io.fabricrpc.invocation;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** For the modules' tests: the directive patterns of jit-directives.json, and the check that one names a method. */
public final class JitDirectivePatterns {
    private JitDirectivePatterns() {
    }

    /** Every pattern ({@code +} or {@code -}, then {@code package/Class.method}), in file order. */
    public static List<String> all() throws IOException {
        return JitDirectives.inlinePatterns();
    }

    /** Fails unless the class a pattern names (no wildcard) is on this class path and declares the method. */
    public static void assertNamesExistingMethod(String pattern) throws ClassNotFoundException {
        int dot = pattern.lastIndexOf('.');
        Class<?> type = Class.forName(pattern.substring(1, dot).replace('/', '.'));
        String method = pattern.substring(dot + 1);
        assertTrue(Arrays.stream(type.getDeclaredMethods()).anyMatch(m -> m.getName().equals(method)),
                pattern + ": " + type.getName() + " has no method " + method);
    }
}
