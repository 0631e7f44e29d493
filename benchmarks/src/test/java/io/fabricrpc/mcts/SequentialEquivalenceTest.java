package io.fabricrpc.mcts;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.mcts.hex.Hex;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SequentialEquivalenceTest {
    @Test
    void oneThreadOneRolloutInFlightBuildsTheSequentialTree() throws Exception {
        Hex hex = new Hex(4);
        byte[] start = hex.initialState();
        for (String move : new String[] {"b2", "c3", "b3", "c2", "a4", "d1"}) {
            hex.play(start, hex.parseMove(move)); // 10 empty cells: rollouts reach finished games, evaluated again
        }
        int rollouts = 3000;
        MctsSettings settings = MctsSettings.defaults().withPlayouts(4).withInFlightPerThread(1)
                .withPhaseRolloutsPerThread(500).withRollouts(rollouts).withTimeLimit(Duration.ofSeconds(60))
                .withSeed(42).withTimeout(Duration.ofSeconds(30));
        String distributed;
        SearchResult result;
        try (Fabric fabric = InJvmJobs.join(1)) {
            MctsSearch search = new MctsSearch(fabric, hex, settings, start, null);
            result = search.run();
            distributed = search.dumpTree();
        }
        SequentialMcts sequential = new SequentialMcts(hex, start, 4, 1.0, 42);
        for (int i = 0; i < rollouts; i++) {
            sequential.rollout();
        }
        assertEquals(rollouts, result.rolloutsCompleted());
        assertEquals(rollouts, result.rootVisits());
        assertEquals(0, result.deferrals(), "one rollout in flight never defers");
        assertEquals(sequential.dump(), distributed);
        // Not a trivial tree: hundreds of children, several levels deep, most rollouts ending in finished games.
        assertTrue(distributed.lines().count() > 500, "tree of " + distributed.lines().count() + " children");
        int depth = distributed.lines().mapToInt(l -> Integer.parseInt(l.substring(0, l.indexOf(' ')))).max().orElse(0);
        assertTrue(depth >= 3, "deepest child at depth " + depth);
    }
}
