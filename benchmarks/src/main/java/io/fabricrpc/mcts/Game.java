package io.fabricrpc.mcts;

import java.util.SplittableRandom;

/**
 * A sequential game specification: all the MCTS framework needs from a game. A state is a fixed-length byte array
 * (it travels as a {@code callBuffer}); moves are ints in {@code [0, maxMoves())}; players are 0 (moves first) and 1.
 * Implementations must be stateless and thread-safe (every worker thread calls them concurrently), and every process
 * must build an equal instance (the framework creates it from the same arguments on every rank).
 */
public interface Game {
    /** A result of {@link #winner} and {@link #playout}: the game is not over. */
    int NONE = -1;
    /** A result of {@link #winner} and {@link #playout}: the game ended in a draw. */
    int DRAW = 2;

    /** Length of every state array. */
    int stateBytes();

    /** The starting position. */
    byte[] initialState();

    /** An upper bound on move ids. */
    int maxMoves();

    /** Writes the legal moves of {@code state} into {@code out} (at least {@link #maxMoves()} long); returns how many. */
    int legalMoves(byte[] state, int[] out);

    /** Plays {@code move} for the side to move, in place. */
    void play(byte[] state, int move);

    /** 0 or 1. */
    int sideToMove(byte[] state);

    /** 0 or 1 if that player has won, {@link #DRAW}, or {@link #NONE} while the game goes on. */
    int winner(byte[] state);

    /** Plays random moves from {@code state} (left unchanged) to the end; returns the winner (0, 1 or {@link #DRAW}). */
    int playout(byte[] state, SplittableRandom random);

    /** A move's name, e.g. {@code c3}; {@link #parseMove} reads it back. */
    String moveName(int move);

    int parseMove(String name);

    /** The position as text, for a terminal. */
    String render(byte[] state);
}
