package io.fabricrpc.mcts;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A plain single-threaded MCTS written straight from the textbook (select by UCB, expand one random unexplored
 * move, simulate, backpropagate), with the framework's conventions: the expansion order and the playouts of node
 * number k are seeded from (seed, k); visits and wins per child in the parent; wins in half-points for the side to
 * move at the parent. The reference the framework must equal with one thread and one rollout in flight.
 */
final class SequentialMcts {
    private final Game game;
    private final int playouts;
    private final double c;
    private final long seed;
    private int created;
    final SeqNode root;

    final class SeqNode {
        final byte[] state;
        final int toMove;
        final int winner;
        final long id;
        int[] moves;
        final List<SeqNode> children = new ArrayList<>();
        final List<Long> visits = new ArrayList<>();
        final List<Long> wins = new ArrayList<>();
        long total;

        SeqNode(byte[] state) {
            this.state = state;
            this.toMove = game.sideToMove(state);
            this.winner = game.winner(state);
            this.id = created++;
        }

        int[] moves() {
            if (moves == null) {
                int[] all = new int[game.maxMoves()];
                int count = game.legalMoves(state, all);
                moves = java.util.Arrays.copyOf(all, count);
                SplittableRandom r = new SplittableRandom(MctsSettings.nodeSeed(seed, id, 1));
                for (int i = count - 1; i > 0; i--) {
                    int j = r.nextInt(i + 1);
                    int t = moves[i];
                    moves[i] = moves[j];
                    moves[j] = t;
                }
            }
            return moves;
        }
    }

    SequentialMcts(Game game, byte[] start, int playouts, double c, long seed) {
        this.game = game;
        this.playouts = playouts;
        this.c = c;
        this.seed = seed;
        this.root = new SeqNode(start.clone());
        root.moves();
    }

    void rollout() {
        List<SeqNode> pathNodes = new ArrayList<>();
        List<Integer> pathSlots = new ArrayList<>();
        SeqNode node = root;
        SeqNode leaf;
        while (true) {
            if (node.winner != Game.NONE) {
                leaf = node;
                break;
            }
            int[] moves = node.moves();
            int slot;
            if (node.children.size() < moves.length) {
                slot = node.children.size();
                byte[] state = node.state.clone();
                game.play(state, moves[slot]);
                node.children.add(new SeqNode(state));
                node.visits.add(1L);
                node.wins.add(0L);
                node.total++;
                pathNodes.add(node);
                pathSlots.add(slot);
                leaf = node.children.get(slot);
                break;
            }
            slot = -1;
            double best = Double.NEGATIVE_INFINITY;
            double logTotal = Math.log(node.total);
            double scale = 2.0 * playouts;
            for (int s = 0; s < moves.length; s++) {
                long v = node.visits.get(s);
                double score = node.wins.get(s) / (scale * v) + c * Math.sqrt(logTotal / v);
                if (score > best) {
                    best = score;
                    slot = s;
                }
            }
            node.visits.set(slot, node.visits.get(slot) + 1);
            node.total++;
            pathNodes.add(node);
            pathSlots.add(slot);
            node = node.children.get(slot);
        }
        long score0 = 0;
        if (leaf.winner != Game.NONE) {
            score0 = (long) playouts * (leaf.winner == 0 ? 2 : leaf.winner == Game.DRAW ? 1 : 0);
        } else {
            SplittableRandom r = new SplittableRandom(MctsSettings.nodeSeed(seed, leaf.id, 2));
            for (int i = 0; i < playouts; i++) {
                int w = game.playout(leaf.state, r);
                score0 += w == 0 ? 2 : w == Game.DRAW ? 1 : 0;
            }
        }
        for (int i = pathNodes.size() - 1; i >= 0; i--) {
            SeqNode n = pathNodes.get(i);
            int s = pathSlots.get(i);
            n.wins.set(s, n.wins.get(s) + (n.toMove == 0 ? score0 : 2L * playouts - score0));
        }
    }

    /** The same text as {@link MctsSearch#dumpTree()}. */
    String dump() {
        StringBuilder sb = new StringBuilder();
        dump(root, 0, sb);
        return sb.toString();
    }

    private void dump(SeqNode node, int depth, StringBuilder sb) {
        for (int s = 0; s < node.children.size(); s++) {
            sb.append(depth).append(' ').append(game.moveName(node.moves[s])).append(' ').append(node.visits.get(s))
                    .append(' ').append(node.wins.get(s)).append('\n');
            dump(node.children.get(s), depth + 1, sb);
        }
    }
}
