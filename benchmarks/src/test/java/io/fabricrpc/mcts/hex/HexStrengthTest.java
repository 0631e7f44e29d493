package io.fabricrpc.mcts.hex;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.mcts.InJvmJobs;
import io.fabricrpc.mcts.MctsSearch;
import io.fabricrpc.mcts.MctsSettings;
import io.fabricrpc.mcts.SearchResult;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The solved 6×6 openings (../shared/docs/hex-ground-truth.md, from Benzene's dfpn-solve-6x6.tst): after a search
 * from the empty board, the chosen opening is a winning one and the winning openings' mean win rate exceeds the
 * losing ones', and the obtuse corners (a6, f1) beat the acute ones (a1, f6), which fixes the adjacency diagonal.
 * Which edges Black joins is Benzene's convention (rows 1 and n) as the file states: transposing the board maps the
 * game onto itself except for 12 cells (a3-a5, f2-f4 against c1-e1, b6-d6), and random-playout MCTS does not
 * separate those at any budget tried (0.4861 against 0.4845 after 200,000 rollouts; transposed 0.4860 / 0.4871).
 */
class HexStrengthTest {
    static final Set<String> WINNING = Set.of("a3", "a4", "a5", "a6", "b2", "b3", "b4", "b5", "c2", "c3", "c4", "c5",
            "d2", "d3", "d4", "d5", "e2", "e3", "e4", "e5", "f1", "f2", "f3", "f4");
    static final Set<String> LOSING = Set.of("a1", "a2", "b1", "b6", "c1", "c6", "d1", "d6", "e1", "e6", "f5", "f6");
    static final long ROLLOUTS = Long.getLong("mcts.strength.rollouts", 60_000);

    static SearchResult search(Hex.Edges edges) throws Exception {
        Hex hex = new Hex(6, edges);
        MctsSettings settings = MctsSettings.defaults().withRollouts(ROLLOUTS).withPhaseRolloutsPerThread(4096)
                .withTimeLimit(Duration.ofSeconds(90)).withSeed(6).withTimeout(Duration.ofSeconds(60));
        try (Fabric fabric = InJvmJobs.join(2)) {
            return new MctsSearch(fabric, hex, settings, hex.initialState(), null).run();
        }
    }

    static double meanWinRate(SearchResult r, Set<String> moves) {
        return r.moves().stream().filter(m -> moves.contains(m.name())).mapToDouble(SearchResult.MoveStat::winRate)
                .average().orElseThrow();
    }

    @Test
    void theChosenOpeningWinsAndWinningOpeningsRankAboveLosingOnes() throws Exception {
        SearchResult r = search(Hex.Edges.BLACK_NORTH_SOUTH);
        double win = meanWinRate(r, WINNING);
        double loss = meanWinRate(r, LOSING);
        double obtuse = meanWinRate(r, Set.of("a6", "f1"));
        double acute = meanWinRate(r, Set.of("a1", "f6"));
        String report = String.format("chosen %s; mean win rate of the winning openings %.4f, of the losing ones %.4f; "
                + "obtuse corners a6 f1 %.4f, acute corners a1 f6 %.4f (%d rollouts)", r.best().name(), win, loss, obtuse,
                acute, ROLLOUTS);
        System.out.println(report);
        assertTrue(WINNING.contains(r.best().name()), report);
        assertTrue(win > loss, report);
        // The solved set has the obtuse corners winning and the acute ones losing: this fixes the adjacency diagonal
        // (a1 touches b1 and a2 only). The mirrored diagonal would swap the two pairs.
        assertTrue(obtuse > acute, report);
    }
}
