package io.fabricrpc.benchmarks.table2;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.fabric.ThreadId;

/**
 * A column that goes through a {@link Fabric}: {@code write} ({@link Fabric#call}, one-sided through messengers),
 * {@code send} ({@link Fabric#callSend}, two-sided), and any fabric wrapper with the same API, e.g. the
 * aggregating fabrics of the {@code trad} and {@code ovfl} columns. The receiver runs {@link Fabric#processCalls()}.
 */
final class FabricColumn implements Column {
    /** Calls between two looks at the clock. */
    static final int BATCH = 256;

    private final String name;
    private final Fabric fabric;
    private final ThreadId peer;
    private final boolean sendBased;

    /**
     * @param fabric    the fabric (or wrapper) whose calls are measured; its {@code flush()} ends each measurement
     * @param peer      the receiving thread
     * @param sendBased {@link Fabric#callSend} instead of {@link Fabric#call}
     */
    FabricColumn(String name, Fabric fabric, ThreadId peer, boolean sendBased) {
        this.name = name;
        this.fabric = fabric;
        this.peer = peer;
        this.sendBased = sendBased;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public long sendUntil(int payloadBytes, long first, long deadlineNanos) {
        long i = first;
        // One loop per size: each call site sees one lambda class.
        switch (payloadBytes) {
            case 8 -> {
                do {
                    for (int b = 0; b < BATCH; b++, i++) {
                        sent(sendBased ? fabric.callSend(peer, Payloads.capture1(i)) : fabric.call(peer, Payloads.capture1(i)), i);
                    }
                } while (System.nanoTime() - deadlineNanos < 0);
            }
            case 64 -> {
                do {
                    for (int b = 0; b < BATCH; b++, i++) {
                        sent(sendBased ? fabric.callSend(peer, Payloads.capture8(i)) : fabric.call(peer, Payloads.capture8(i)), i);
                    }
                } while (System.nanoTime() - deadlineNanos < 0);
            }
            case 256 -> {
                do {
                    for (int b = 0; b < BATCH; b++, i++) {
                        sent(sendBased ? fabric.callSend(peer, Payloads.capture32(i)) : fabric.call(peer, Payloads.capture32(i)), i);
                    }
                } while (System.nanoTime() - deadlineNanos < 0);
            }
            default -> throw new IllegalArgumentException("payload must be 8, 64 or 256 bytes, got " + payloadBytes);
        }
        return i - first;
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
