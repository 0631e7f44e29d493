package io.fabricrpc.mcts;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.SplittableRandom;

/**
 * One tree node, owned by one worker thread. Slot s holds the child reached by {@code moves[s]}: its visits (counted
 * on the way down: the virtual loss), its wins for the side to move here in half-points (counted on the way up),
 * its location (0 until placed, else location + 1) and the selections deferred while it is not placed.
 * Only the owner touches a node, except the root ({@code shared}), which every thread of its process selects from:
 * the root's slots are allocated whole up front and never move; other nodes' slots grow by copy, on the owner only.
 * A deferral adds to the slot's count and then reads the location; a placement stores the location and then takes
 * the count (both volatile), so one of the two sees the other and every deferred selection is released once.
 */
final class Node {
    static final int VISITS = 0;
    static final int WINS = 1;
    static final int CHILD = 2;
    static final int DEFERRED = 3;
    private static final int STRIDE = 4;
    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle EXPANDED;
    private static final VarHandle TOTAL;

    static {
        try {
            EXPANDED = MethodHandles.lookup().findVarHandle(Node.class, "expanded", int.class);
            TOTAL = MethodHandles.lookup().findVarHandle(Node.class, "total", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final byte[] state;
    final long location;
    final long parent;
    final int parentSlot;
    final int toMove;
    final int winner;
    final boolean shared;
    /** Legal moves in expansion order (shuffled); null until the first expansion of a non-shared node. */
    private int[] moves;
    private long[] slots;
    @SuppressWarnings("unused") // through EXPANDED
    private int expanded;
    @SuppressWarnings("unused") // through TOTAL
    private long total;

    Node(Game game, byte[] state, long location, long parent, int parentSlot, boolean shared, long seed, int[] scratch) {
        this.state = state;
        this.location = location;
        this.parent = parent;
        this.parentSlot = parentSlot;
        this.toMove = game.sideToMove(state);
        this.winner = game.winner(state);
        this.shared = shared;
        if (shared) {
            initMoves(game, seed, scratch);
        }
    }

    boolean terminal() {
        return winner != Game.NONE;
    }

    /** Computes the shuffled legal moves (the order in which children are expanded) and the first slots. */
    private void initMoves(Game game, long seed, int[] scratch) {
        int count = game.legalMoves(state, scratch);
        if (count == 0 && !terminal()) {
            throw new IllegalStateException("the game reports no legal move in a position that is not over");
        }
        int[] m = java.util.Arrays.copyOf(scratch, count);
        SplittableRandom random = new SplittableRandom(MctsSettings.nodeSeed(seed, location, 1));
        for (int i = count - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = m[i];
            m[i] = m[j];
            m[j] = t;
        }
        slots = new long[STRIDE * (shared ? count : Math.min(count, 4))];
        moves = m;
    }

    /** Claims the next unexpanded slot and counts a visit to it; -1 if every move has a child. */
    int claimExpansion(Game game, long seed, int[] scratch) {
        if (shared) {
            while (true) {
                int e = (int) EXPANDED.getAcquire(this);
                if (e >= moves.length) {
                    return -1;
                }
                if (EXPANDED.compareAndSet(this, e, e + 1)) {
                    addVisit(e);
                    return e;
                }
            }
        }
        if (moves == null) {
            initMoves(game, seed, scratch);
        }
        int e = expanded;
        if (e >= moves.length) {
            return -1;
        }
        if (STRIDE * (e + 1) > slots.length) {
            slots = java.util.Arrays.copyOf(slots, Math.min(STRIDE * moves.length, slots.length * 2));
        }
        expanded = e + 1;
        addVisit(e);
        return e;
    }

    int move(int slot) {
        return moves[slot];
    }

    int slotCount() {
        return moves == null ? 0 : Math.min(moves.length, (int) EXPANDED.getAcquire(this));
    }

    /** The UCB choice among expanded slots (lowest slot on ties), with its visit counted; -1 if none yet. */
    int selectAndVisit(double c, double scale) {
        int n = slotCount();
        double logTotal = Math.log((long) TOTAL.getOpaque(this));
        int best = -1;
        double bestScore = Double.NEGATIVE_INFINITY;
        for (int s = 0; s < n; s++) {
            long v = (long) LONGS.getOpaque(slots, STRIDE * s + VISITS);
            if (v == 0) {
                continue; // a shared slot claimed a moment ago, its visit not yet counted
            }
            long w = (long) LONGS.getOpaque(slots, STRIDE * s + WINS);
            double score = w / (scale * v) + c * Math.sqrt(logTotal / v);
            if (score > bestScore) {
                bestScore = score;
                best = s;
            }
        }
        if (best >= 0) {
            addVisit(best);
        }
        return best;
    }

    /** Virtual loss: the visit is counted now, the win (if any) on the way back up. */
    private void addVisit(int slot) {
        if (shared) {
            LONGS.getAndAdd(slots, STRIDE * slot + VISITS, 1L);
            TOTAL.getAndAdd(this, 1L);
        } else {
            slots[STRIDE * slot + VISITS]++;
            total++;
        }
    }

    void addWins(int slot, long halfPoints) {
        if (shared) {
            LONGS.getAndAdd(slots, STRIDE * slot + WINS, halfPoints);
        } else {
            slots[STRIDE * slot + WINS] += halfPoints;
        }
    }

    /** The child's location, or -1 while it is not placed (acquire: a placement is seen whole). */
    long child(int slot) {
        return (long) LONGS.getAcquire(slots, STRIDE * slot + CHILD) - 1;
    }

    /** Defers one selection of {@code slot}; returns how many deferred selections the caller must now release. */
    int defer(int slot) {
        LONGS.getAndAdd(slots, STRIDE * slot + DEFERRED, 1L);
        if ((long) LONGS.getVolatile(slots, STRIDE * slot + CHILD) != 0) {
            return (int) (long) LONGS.getAndSet(slots, STRIDE * slot + DEFERRED, 0L);
        }
        return 0;
    }

    /** Stores the child's location; returns the deferred selections to send to it. */
    int place(int slot, long childLocation) {
        LONGS.setVolatile(slots, STRIDE * slot + CHILD, childLocation + 1);
        return (int) (long) LONGS.getAndSet(slots, STRIDE * slot + DEFERRED, 0L);
    }

    long visits(int slot) {
        return (long) LONGS.getOpaque(slots, STRIDE * slot + VISITS);
    }

    long wins(int slot) {
        return (long) LONGS.getOpaque(slots, STRIDE * slot + WINS);
    }

    long totalVisits() {
        return (long) TOTAL.getOpaque(this);
    }
}
