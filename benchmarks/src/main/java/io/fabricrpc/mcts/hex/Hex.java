package io.fabricrpc.mcts.hex;

import io.fabricrpc.mcts.Game;

import java.util.SplittableRandom;

/**
 * Hex on an n×n rhombus. Cell {@code row * n + col} is named column letter + row number ({@code a1} … ); a cell
 * touches (r, c±1), (r±1, c), (r−1, c+1), (r+1, c−1), so a1 is an acute corner. Player 0 (Black) moves first. Under
 * the default {@link Edges#BLACK_NORTH_SOUTH} Black joins rows 1 and n and White columns a and n (Benzene's
 * convention, confirmed by the 6×6 strength test). A state is n·n cells (0 empty, 1 Black, 2 White) and one byte
 * for the side to move. Immutable and thread-safe; playouts use per-thread scratch.
 */
public final class Hex implements Game {
    /** Which edges the first player joins. */
    public enum Edges { BLACK_NORTH_SOUTH, BLACK_WEST_EAST }

    public static final byte EMPTY = 0;
    public static final byte BLACK = 1;
    public static final byte WHITE = 2;

    private final int n;
    private final int cells;
    private final Edges edges;
    private final int[][] neighbours;
    private final ThreadLocal<Scratch> scratch;

    public Hex(int n) {
        this(n, Edges.BLACK_NORTH_SOUTH);
    }

    public Hex(int n, Edges edges) {
        if (n < 1 || n > 26) {
            throw new IllegalArgumentException("board size must be 1..26, got " + n);
        }
        this.n = n;
        this.cells = n * n;
        this.edges = edges;
        this.neighbours = new int[cells][];
        int[][] offsets = {{0, -1}, {0, 1}, {-1, 0}, {1, 0}, {-1, 1}, {1, -1}};
        for (int cell = 0; cell < cells; cell++) {
            int r = cell / n;
            int c = cell % n;
            int[] list = new int[6];
            int count = 0;
            for (int[] o : offsets) {
                int rr = r + o[0];
                int cc = c + o[1];
                if (rr >= 0 && rr < n && cc >= 0 && cc < n) {
                    list[count++] = rr * n + cc;
                }
            }
            neighbours[cell] = java.util.Arrays.copyOf(list, count);
        }
        this.scratch = ThreadLocal.withInitial(() -> new Scratch(cells));
    }

    public int size() {
        return n;
    }

    public Edges edges() {
        return edges;
    }

    @Override
    public int stateBytes() {
        return cells + 1;
    }

    @Override
    public byte[] initialState() {
        return new byte[cells + 1];
    }

    @Override
    public int maxMoves() {
        return cells;
    }

    @Override
    public int legalMoves(byte[] state, int[] out) {
        int count = 0;
        for (int cell = 0; cell < cells; cell++) {
            if (state[cell] == EMPTY) {
                out[count++] = cell;
            }
        }
        return count;
    }

    @Override
    public void play(byte[] state, int move) {
        if (state[move] != EMPTY) {
            throw new IllegalArgumentException(moveName(move) + " is not empty");
        }
        int side = state[cells];
        state[move] = (byte) (side + 1);
        state[cells] = (byte) (1 - side);
    }

    @Override
    public int sideToMove(byte[] state) {
        return state[cells];
    }

    /** Sets the side to move (for positions given stone by stone). */
    public void setSideToMove(byte[] state, int player) {
        state[cells] = (byte) player;
    }

    @Override
    public int winner(byte[] state) {
        Scratch s = scratch.get();
        if (connects(state, BLACK, s)) {
            return 0;
        }
        if (connects(state, WHITE, s)) {
            return 1;
        }
        return NONE;
    }

    /**
     * Fills the empty cells in random order, alternating from the side to move (so the side to move gets the extra
     * cell of an odd count), then reads the full board's winner: on a full Hex board exactly one player connects.
     */
    @Override
    public int playout(byte[] state, SplittableRandom random) {
        Scratch s = scratch.get();
        byte[] board = s.board;
        System.arraycopy(state, 0, board, 0, cells);
        int[] empties = s.empties;
        int count = 0;
        for (int cell = 0; cell < cells; cell++) {
            if (board[cell] == EMPTY) {
                empties[count++] = cell;
            }
        }
        byte mover = (byte) (state[cells] + 1);
        byte other = (byte) (3 - mover);
        for (int i = count - 1; i >= 0; i--) {
            int j = random.nextInt(i + 1);
            int cell = empties[j];
            empties[j] = empties[i];
            empties[i] = cell;
            board[cell] = ((count - 1 - i) & 1) == 0 ? mover : other;
        }
        return connects(board, BLACK, s) ? 0 : 1;
    }

    /** Whether {@code colour} joins its two edges on {@code board} (flood fill from its first edge). */
    boolean connects(byte[] board, byte colour, Scratch s) {
        boolean rows = (colour == BLACK) == (edges == Edges.BLACK_NORTH_SOUTH); // joins row 1 and row n
        int[] stack = s.stack;
        boolean[] seen = s.seen;
        java.util.Arrays.fill(seen, false);
        int top = 0;
        for (int i = 0; i < n; i++) {
            int cell = rows ? i : i * n;
            if (board[cell] == colour) {
                seen[cell] = true;
                stack[top++] = cell;
            }
        }
        while (top > 0) {
            int cell = stack[--top];
            if (rows ? cell / n == n - 1 : cell % n == n - 1) {
                return true;
            }
            for (int next : neighbours[cell]) {
                if (!seen[next] && board[next] == colour) {
                    seen[next] = true;
                    stack[top++] = next;
                }
            }
        }
        return false;
    }

    /** The cells adjacent to {@code cell}. */
    public int[] neighbours(int cell) {
        return neighbours[cell].clone();
    }

    @Override
    public String moveName(int move) {
        return "" + (char) ('a' + move % n) + (move / n + 1);
    }

    @Override
    public int parseMove(String name) {
        String s = name.trim().toLowerCase(java.util.Locale.ROOT);
        if (s.length() < 2 || s.charAt(0) < 'a' || s.charAt(0) >= 'a' + n) {
            throw new IllegalArgumentException("not a cell of a " + n + "x" + n + " board: " + name);
        }
        int row;
        try {
            row = Integer.parseInt(s.substring(1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("not a cell of a " + n + "x" + n + " board: " + name);
        }
        if (row < 1 || row > n) {
            throw new IllegalArgumentException("not a cell of a " + n + "x" + n + " board: " + name);
        }
        return (row - 1) * n + (s.charAt(0) - 'a');
    }

    /** The board as text: rows shifted right as they go down (the rhombus), B/W stones, side to move last. */
    @Override
    public String render(byte[] state) {
        StringBuilder sb = new StringBuilder("   ");
        for (int c = 0; c < n; c++) {
            sb.append(' ').append((char) ('a' + c));
        }
        sb.append('\n');
        for (int r = 0; r < n; r++) {
            sb.append(" ".repeat(r)).append(String.format("%3d", r + 1));
            for (int c = 0; c < n; c++) {
                byte v = state[r * n + c];
                sb.append(' ').append(v == BLACK ? 'B' : v == WHITE ? 'W' : '.');
            }
            sb.append('\n');
        }
        sb.append(edges == Edges.BLACK_NORTH_SOUTH ? "Black (B) joins rows 1-" + n + ", White (W) columns a-"
                : "Black (B) joins columns a-" + (char) ('a' + n - 1) + ", White (W) rows 1-" + n + "; ");
        if (edges == Edges.BLACK_NORTH_SOUTH) {
            sb.append((char) ('a' + n - 1)).append("; ");
        }
        sb.append(state[cells] == 0 ? "Black" : "White").append(" to move");
        return sb.toString();
    }

    /** Per-thread work arrays of the flood fill and the playouts. */
    static final class Scratch {
        final byte[] board;
        final int[] empties;
        final int[] stack;
        final boolean[] seen;

        Scratch(int cells) {
            board = new byte[cells];
            empties = new int[cells];
            stack = new int[cells];
            seen = new boolean[cells];
        }
    }
}
