package io.fabricrpc.mcts;

import io.fabricrpc.api.Fabric;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A second game through the same framework: tic-tac-toe, with draws (half points) and shallow finished games. */
class AnotherGameTest {
    @Test
    void ticTacToeSearchesExactlyAndPrefersTheCentre() throws Exception {
        TicTacToe game = new TicTacToe();
        MctsSettings settings = MctsSettings.defaults().withRollouts(20_000).withPhaseRolloutsPerThread(1024)
                .withTimeLimit(Duration.ofSeconds(60)).withTimeout(Duration.ofSeconds(30));
        SearchResult r;
        try (Fabric fabric = InJvmJobs.join(2)) {
            r = new MctsSearch(fabric, game, settings, game.initialState(), null).run();
        }
        assertEquals(20_000, r.rolloutsCompleted());
        assertEquals(20_000, r.rootVisits());
        assertEquals(20_000, r.simulations());
        assertEquals(9, r.moves().size());
        assertEquals("b2", r.best().name(), r.moves().toString());
        // Perfect play draws: the best move's win rate (draws count half) stays near one half, not near 1.
        assertTrue(r.best().winRate() > 0.4 && r.best().winRate() < 0.8, r.moves().toString());
    }
}
