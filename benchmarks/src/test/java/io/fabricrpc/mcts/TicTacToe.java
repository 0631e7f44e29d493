package io.fabricrpc.mcts;

import java.util.SplittableRandom;

/** Tic-tac-toe as a second {@link Game}, in the tests only: it plugs in without touching the framework and draws. */
final class TicTacToe implements Game {
    private static final int[][] LINES = {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {0, 3, 6}, {1, 4, 7}, {2, 5, 8}, {0, 4, 8},
            {2, 4, 6}};

    @Override
    public int stateBytes() {
        return 10; // 9 cells (0 empty, 1 X, 2 O) and the side to move
    }

    @Override
    public byte[] initialState() {
        return new byte[10];
    }

    @Override
    public int maxMoves() {
        return 9;
    }

    @Override
    public int legalMoves(byte[] state, int[] out) {
        if (winner(state) != NONE) {
            return 0;
        }
        int n = 0;
        for (int c = 0; c < 9; c++) {
            if (state[c] == 0) {
                out[n++] = c;
            }
        }
        return n;
    }

    @Override
    public void play(byte[] state, int move) {
        state[move] = (byte) (state[9] + 1);
        state[9] = (byte) (1 - state[9]);
    }

    @Override
    public int sideToMove(byte[] state) {
        return state[9];
    }

    @Override
    public int winner(byte[] state) {
        for (int[] l : LINES) {
            if (state[l[0]] != 0 && state[l[0]] == state[l[1]] && state[l[1]] == state[l[2]]) {
                return state[l[0]] - 1;
            }
        }
        for (int c = 0; c < 9; c++) {
            if (state[c] == 0) {
                return NONE;
            }
        }
        return DRAW;
    }

    @Override
    public int playout(byte[] state, SplittableRandom random) {
        byte[] s = state.clone();
        int[] moves = new int[9];
        int w;
        while ((w = winner(s)) == NONE) {
            int n = legalMoves(s, moves);
            play(s, moves[random.nextInt(n)]);
        }
        return w;
    }

    @Override
    public String moveName(int move) {
        return "" + (char) ('a' + move % 3) + (move / 3 + 1);
    }

    @Override
    public int parseMove(String name) {
        return (name.charAt(1) - '1') * 3 + name.charAt(0) - 'a';
    }

    @Override
    public String render(byte[] state) {
        StringBuilder sb = new StringBuilder();
        for (int c = 0; c < 9; c++) {
            sb.append(".XO".charAt(state[c])).append(c % 3 == 2 ? "\n" : "");
        }
        return sb.toString();
    }
}
