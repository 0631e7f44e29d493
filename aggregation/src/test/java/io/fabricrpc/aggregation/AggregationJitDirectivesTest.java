package io.fabricrpc.aggregation;

import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The compiler directives (invocation's jit-directives.json) that name this module's methods name methods that exist:
 * a renamed method would leave a directive that silently matches nothing. The invocation module cannot see them.
 */
class AggregationJitDirectivesTest {

    @Test
    void everyPatternOfThisModuleNamesAnExistingMethod() throws Exception {
        String json;
        try (InputStream in = AggregationJitDirectivesTest.class
                .getResourceAsStream("/io/fabricrpc/invocation/jit-directives.json")) {
            assertNotNull(in, "jit-directives.json is not on the class path");
            json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        List<String> patterns = Arrays.stream(json.split("\n")).map(String::strip)
                .filter(t -> t.startsWith("\"+io/fabricrpc/aggregation/") || t.startsWith("\"-io/fabricrpc/aggregation/"))
                .map(t -> t.substring(2, t.indexOf('"', 1)))
                .toList();
        assertFalse(patterns.isEmpty(), "no directive names this module; drop this test with the last one");
        for (String pattern : patterns) {
            int dot = pattern.lastIndexOf('.');
            Class<?> type = Class.forName(pattern.substring(0, dot).replace('/', '.'));
            String method = pattern.substring(dot + 1);
            assertTrue(Arrays.stream(type.getDeclaredMethods()).anyMatch(m -> m.getName().equals(method)),
                    pattern + ": " + type.getName() + " has no method " + method);
        }
    }
}
