package io.fabricrpc.benchmarks;

/** Checks an echo; shared by every client so that all do the same work per call. */
final class Echoes {
    private Echoes() {
    }

    static void check(String what, long sequence, int payload, long length, long echoedSequence) {
        if (length != payload || echoedSequence != sequence) {
            throw new IllegalStateException(what + " call " + sequence + ": echo of " + length + " bytes with sequence "
                    + echoedSequence + ", expected " + payload + " bytes with sequence " + sequence);
        }
    }
}
