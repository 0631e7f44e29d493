package io.fabricrpc.mcts.hex;

import io.fabricrpc.mcts.Game;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HexTest {
    /**
     * Brute force: the set of cells reachable from a player's first edge, grown by repeated sweeps over every cell
     * until nothing changes (no stack, no visited order), then whether it touches the far edge.
     */
    private static boolean bruteConnects(Hex hex, byte[] board, byte colour) {
        int n = hex.size();
        boolean rows = (colour == Hex.BLACK) == (hex.edges() == Hex.Edges.BLACK_NORTH_SOUTH);
        boolean[] reached = new boolean[n * n];
        boolean changed = true;
        while (changed) {
            changed = false;
            for (int cell = 0; cell < n * n; cell++) {
                if (reached[cell] || board[cell] != colour) {
                    continue;
                }
                boolean onFirstEdge = rows ? cell / n == 0 : cell % n == 0;
                boolean next = onFirstEdge;
                int r = cell / n;
                int c = cell % n;
                for (int other = 0; other < n * n && !next; other++) {
                    int dr = other / n - r;
                    int dc = other % n - c;
                    boolean adjacent = (dr == 0 && Math.abs(dc) == 1) || (dc == 0 && Math.abs(dr) == 1)
                            || (dr == -1 && dc == 1) || (dr == 1 && dc == -1);
                    next = adjacent && reached[other];
                }
                if (next) {
                    reached[cell] = true;
                    changed = true;
                }
            }
        }
        for (int cell = 0; cell < n * n; cell++) {
            if (reached[cell] && (rows ? cell / n == n - 1 : cell % n == n - 1)) {
                return true;
            }
        }
        return false;
    }

    @ParameterizedTest
    @ValueSource(ints = {3, 4})
    void winDetectorMatchesBruteForceOnEveryFullBoard(int n) {
        for (Hex.Edges edges : Hex.Edges.values()) {
            Hex hex = new Hex(n, edges);
            int cells = n * n;
            for (int bits = 0; bits < 1 << cells; bits++) {
                byte[] state = hex.initialState();
                for (int cell = 0; cell < cells; cell++) {
                    state[cell] = (bits >>> cell & 1) == 1 ? Hex.BLACK : Hex.WHITE;
                }
                boolean black = bruteConnects(hex, state, Hex.BLACK);
                boolean white = bruteConnects(hex, state, Hex.WHITE);
                // The Hex theorem: on a full board exactly one player connects.
                assertTrue(black != white, "board " + bits + ": black " + black + ", white " + white);
                assertEquals(black ? 0 : 1, hex.winner(state), "board " + bits + " (" + edges + ")\n" + hex.render(state));
            }
        }
    }

    @Test
    void winDetectorSeesNoWinnerOnPartialBoardsWithoutAPath() {
        Hex hex = new Hex(4);
        byte[] state = hex.initialState();
        for (String move : new String[] {"a1", "b1", "a2", "b2", "a3", "b3"}) {
            hex.play(state, hex.parseMove(move));
            assertEquals(Game.NONE, hex.winner(state));
        }
        hex.play(state, hex.parseMove("a4")); // Black a1-a4: rows 1 to 4
        assertEquals(0, hex.winner(state));
    }

    @Test
    void aPlayoutsFirstCellGoesToTheSideToMove() {
        // On a 1x1 board with White to move, White fills the only cell: White joins columns a-a and wins.
        Hex one = new Hex(1);
        byte[] s = one.initialState();
        one.setSideToMove(s, 1);
        assertEquals(1, one.playout(s, new SplittableRandom(1)));
        one.setSideToMove(s, 0);
        assertEquals(0, one.playout(s, new SplittableRandom(1)));
    }

    @Test
    void playoutGivesTheSideToMoveTheExtraCell() {
        // 2x2 board, three empty cells after Black b1: White to move gets two of the three cells.
        Hex hex = new Hex(2);
        byte[] state = hex.initialState();
        hex.play(state, hex.parseMove("b1"));
        // White wins unless Black gets a cell joining row 2 through b1's neighbours (a2 or b2); White holds two of
        // the three empties, Black one, so Black wins iff its one cell is a2 or b2: 2 of 3 orders.
        SplittableRandom random = new SplittableRandom(3);
        int blackWins = 0;
        int trials = 30_000;
        for (int i = 0; i < trials; i++) {
            blackWins += hex.playout(state, random) == 0 ? 1 : 0;
        }
        assertEquals(2.0 / 3, blackWins / (double) trials, 0.02);
    }

    @Test
    void movesParseAndPrint() {
        Hex hex = new Hex(11);
        assertEquals("a1", hex.moveName(0));
        assertEquals("k11", hex.moveName(120));
        assertEquals(hex.parseMove("f6"), 5 * 11 + 5);
        assertThrows(IllegalArgumentException.class, () -> hex.parseMove("l1"));
        assertThrows(IllegalArgumentException.class, () -> hex.parseMove("a12"));
        byte[] state = hex.initialState();
        hex.play(state, hex.parseMove("f6"));
        assertThrows(IllegalArgumentException.class, () -> hex.play(state, hex.parseMove("f6")));
        assertTrue(hex.render(state).contains("B"), hex.render(state));
    }
}
