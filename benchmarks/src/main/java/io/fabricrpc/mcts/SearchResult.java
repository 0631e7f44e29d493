package io.fabricrpc.mcts;

import java.util.List;

/**
 * What a search found and what it cost, as seen by the root owner's process. {@code rolloutsStarted},
 * {@code rolloutsCompleted}, {@code rootVisits} and {@code simulations} are equal when nothing was lost or
 * duplicated. {@code visits} counts selection steps (one per node a rollout passes through). The steady figures
 * cover the phases after the first (JIT warm-up). {@code moves} are sorted by visits, most visited first.
 */
public record SearchResult(long rolloutsStarted, long rolloutsCompleted, long rootVisits, long visits, long simulations,
                           long deferrals, long nodes, double seconds, int phases, long steadyCompletions,
                           long steadyVisits, double steadySeconds, List<MoveStat> moves) {
    /** One root child: its move, visits and win rate for the side to move at the root. */
    public record MoveStat(int move, String name, long visits, double winRate) {
    }

    public MoveStat best() {
        return moves.getFirst();
    }
}
