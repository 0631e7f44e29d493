package io.fabricrpc.benchmarks.table2;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.RemoteRunnable;
import io.fabricrpc.api.ThreadId;

/**
 * A column that goes through a {@link Fabric}: {@code write} ({@link Fabric#call}, one-sided through messengers),
 * {@code send} ({@link Fabric#callSend}, two-sided), and any fabric wrapper with the same API, e.g. the
 * aggregating fabrics of the {@code trad} and {@code ovfl} columns. The receiver runs {@link Fabric#processCalls()}.
 *
 * <p>A column {@code reusing} its call sends one lambda object, built before the loop, over and over: the same bytes
 * on the wire and the same work at the receiver, without the caller's allocation of a lambda per call (a
 * {@code new} of 24 to 272 bytes that a raw baseline does not do). It separates what the fabric costs from what
 * the Java API makes the caller pay.
 */
final class FabricColumn implements Column {
    /** Calls between two looks at the clock. */
    static final int BATCH = 256;

    private final String name;
    private final Fabric fabric;
    private final ThreadId peer;
    private final boolean sendBased;
    private final boolean reusing;

    /**
     * @param fabric    the fabric (or wrapper) whose calls are measured; its {@code flush()} ends each measurement
     * @param peer      the receiving thread
     * @param sendBased {@link Fabric#callSend} instead of {@link Fabric#call}
     */
    FabricColumn(String name, Fabric fabric, ThreadId peer, boolean sendBased) {
        this(name, fabric, peer, sendBased, false);
    }

    /** @param reusing send call {@code first} of every measurement each time (see the class doc) */
    FabricColumn(String name, Fabric fabric, ThreadId peer, boolean sendBased, boolean reusing) {
        this.name = name;
        this.fabric = fabric;
        this.peer = peer;
        this.sendBased = sendBased;
        this.reusing = reusing;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public long sendUntil(int payloadBytes, long first, long deadlineNanos) {
        if (reusing) {
            return sendReusedUntil(Payloads.call(payloadBytes, first), first, deadlineNanos);
        }
        // One method per size: each call site sees one lambda class, and each loop is a compilation of its own. With
        // the three loops in one method, C2 reached its node-count inlining cutoff (NodeCountInliningCutoff) in
        // whichever loop it parsed last, stopped inlining there, and that loop's lambdas were allocated again.
        return switch (payloadBytes) {
            case 8 -> send8Until(first, deadlineNanos);
            case 64 -> send64Until(first, deadlineNanos);
            case 256 -> send256Until(first, deadlineNanos);
            default -> throw new IllegalArgumentException("payload must be 8, 64 or 256 bytes, got " + payloadBytes);
        };
    }

    private long send8Until(long first, long deadlineNanos) {
        long i = first;
        do {
            for (int b = 0; b < BATCH; b++, i++) {
                sent(sendBased ? fabric.callSend(peer, Payloads.capture1(i)) : fabric.call(peer, Payloads.capture1(i)), i);
            }
        } while (System.nanoTime() - deadlineNanos < 0);
        return i - first;
    }

    private long send64Until(long first, long deadlineNanos) {
        long i = first;
        do {
            for (int b = 0; b < BATCH; b++, i++) {
                sent(sendBased ? fabric.callSend(peer, Payloads.capture8(i)) : fabric.call(peer, Payloads.capture8(i)), i);
            }
        } while (System.nanoTime() - deadlineNanos < 0);
        return i - first;
    }

    private long send256Until(long first, long deadlineNanos) {
        long i = first;
        do {
            for (int b = 0; b < BATCH; b++, i++) {
                sent(sendBased ? fabric.callSend(peer, Payloads.capture32(i)) : fabric.call(peer, Payloads.capture32(i)), i);
            }
        } while (System.nanoTime() - deadlineNanos < 0);
        return i - first;
    }

    private long sendReusedUntil(RemoteRunnable call, long first, long deadlineNanos) {
        long i = first;
        do {
            for (int b = 0; b < BATCH; b++, i++) {
                sent(sendBased ? fabric.callSend(peer, call) : fabric.call(peer, call), i);
            }
        } while (System.nanoTime() - deadlineNanos < 0);
        return i - first;
    }

    @Override
    public long expectedSum(int payloadBytes, long first, long calls) {
        return reusing ? Payloads.expectedSumOfRepeats(payloadBytes, first, calls)
                : Payloads.expectedSum(payloadBytes, first, calls);
    }

    private void sent(boolean accepted, long i) {
        if (!accepted) {
            throw new IllegalStateException(name + ": call " + i + " to " + peer + " refused (the messenger's"
                    + " FullPolicy is FAIL and every chunk is full); the benchmark needs RETRY");
        }
    }

    @Override
    public void flush() {
        fabric.flush();
    }

    @Override
    public int poll() {
        return fabric.processCalls();
    }

    @Override
    public String toString() {
        return name + " (" + (sendBased ? "callSend" : "call") + " on " + fabric + ")";
    }
}
