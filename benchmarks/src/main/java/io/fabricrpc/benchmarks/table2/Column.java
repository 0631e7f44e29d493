package io.fabricrpc.benchmarks.table2;

/**
 * One column of Table 2: a way to move calls of a given payload size from the sender thread (rank 0) to the
 * receiver thread (rank 1) and run them there. Each rank builds the same columns on its measuring thread (after
 * {@code attach}); the sender uses {@link #sendUntil} and {@link #flush}, the receiver {@link #poll}. Confined to
 * that thread.
 */
public interface Column extends AutoCloseable {
    /** The column's name in the table (e.g. {@code write}). */
    String name();

    /**
     * Sends calls {@code first, first+1, ...} of {@code payloadBytes} each (see {@link Payloads}) until
     * {@code deadlineNanos} ({@link System#nanoTime()}, checked every few hundred calls).
     *
     * @return the number of calls sent
     * @throws IllegalStateException if a call is refused or the destination stops consuming (with the values)
     */
    long sendUntil(int payloadBytes, long first, long deadlineNanos);

    /**
     * What the receiver's bodies add up to for {@code calls} calls sent from {@code first} on: by default
     * {@link Payloads#expectedSum} (call {@code i} captures {@code i..}); a column that repeats one call says so.
     */
    default long expectedSum(int payloadBytes, long first, long calls) {
        return Payloads.expectedSum(payloadBytes, first, calls);
    }

    /** Pushes out whatever the column buffers (aggregation); part of the timed interval. */
    void flush();

    /** Runs the calls that have arrived (their bodies count into {@link Payloads.Sink}); returns how many ran. */
    int poll();

    /** Releases what the column holds outside the fabric (a baseline's driver, say); the rank calls it at the end. */
    @Override
    default void close() {
    }
}
