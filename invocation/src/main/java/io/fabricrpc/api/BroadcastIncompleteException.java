package io.fabricrpc.api;


import java.util.List;

/**
 * A broadcast with a {@link Synchronizer.Mode#CONSUMED} synchronizer did not reach every live worker: a rank on
 * their path in the tree failed while it held the record. {@link #unreached()} names those workers (as
 * {@code rank/thread}); they are alive and serve later calls, and later broadcasts route around the failed rank.
 */
public class BroadcastIncompleteException extends PeerFailedException {
    /** The live workers that did not confirm, as {@code rank/thread}. */
    private final List<String> unreached;
    /** The broadcast's sequence number at its root. */
    private final long sequence;

    /**
     * Creates the exception.
     *
     * @param failedRank the failed rank on the unreached workers' path
     * @param sequence the broadcast's sequence number at its root
     * @param root the broadcasting worker, as {@code rank/thread}
     * @param unreached the live workers that did not confirm, as {@code rank/thread}
     * @param graceMillis how long they were given after the failure was known
     */
    public BroadcastIncompleteException(int failedRank, long sequence, String root, List<String> unreached,
                                        long graceMillis) {
        super(failedRank, "broadcast " + sequence + " of worker " + root + " did not reach live workers "
                + String.join(", ", unreached) + ": their path in the tree passes through rank " + failedRank
                + ", and they had not run it " + graceMillis + " ms after its failure was known", false);
        this.unreached = List.copyOf(unreached);
        this.sequence = sequence;
    }

    /** {@return the live workers the broadcast did not reach, as {@code rank/thread}} */
    public List<String> unreached() {
        return unreached;
    }

    /** {@return the broadcast's sequence number at its root} */
    public long sequence() {
        return sequence;
    }
}
