package io.fabricrpc.aggregation;

import io.fabricrpc.invocation.JitDirectivePatterns;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * The compiler directives (invocation's jit-directives.json) that name this module's methods name methods that exist:
 * a renamed method would leave a directive that silently matches nothing. The invocation module cannot see them.
 */
class AggregationJitDirectivesTest {

    @Test
    void everyPatternOfThisModuleNamesAnExistingMethod() throws Exception {
        List<String> patterns = JitDirectivePatterns.all().stream()
                .filter(p -> p.substring(1).startsWith("io/fabricrpc/aggregation/"))
                .toList();
        assertFalse(patterns.isEmpty(), "no directive names this module; drop this test with the last one");
        for (String pattern : patterns) {
            JitDirectivePatterns.assertNamesExistingMethod(pattern);
        }
    }
}
