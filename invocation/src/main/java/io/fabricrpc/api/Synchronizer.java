package io.fabricrpc.api;


import java.time.Duration;
import java.util.Arrays;

/**
 * Counts remote calls down (Seriema's Synchronizer): each call given this synchronizer counts down once it has
 * been {@link Mode#SENT sent} (its source memory may be reused) or {@link Mode#CONSUMED consumed} (the receiving
 * thread has run it; the receiver reports that with a one-sided write into the caller's memory).
 * {@link #await} waits until every call so far has counted down. Calls to one destination complete in order, so
 * the synchronizer keeps one entry per destination channel, however many calls it counts.
 *
 * <p>Used by the thread that makes the calls (not thread-safe), and reusable: after {@code await} returns, new
 * calls can be added.
 */
public final class Synchronizer {
    /** When a call counts down. */
    public enum Mode {
        /** Once the call is on its way and its source memory is reusable. */
        SENT,
        /** Once the destination thread has run the call. */
        CONSUMED
    }

    private final Mode mode;
    private SyncTarget[] targets = new SyncTarget[8];
    private long[] marks = new long[8];
    private int pending;
    private int last;

    /**
     * A synchronizer with no calls yet.
     *
     * @param mode when a call counts down: once sent or once consumed
     */
    public Synchronizer(Mode mode) {
        this.mode = mode;
    }

    /**
     * When a call counts down.
     *
     * @return the mode given at construction
     */
    public Mode mode() {
        return mode;
    }

    /**
     * Destination channels with calls not yet counted down (as of this check).
     *
     * @return how many
     */
    public int pending() {
        poll();
        return pending;
    }

    /**
     * Whether every call has counted down.
     *
     * @return true when no destination channel has calls pending
     */
    public boolean isDone() {
        return pending() == 0;
    }

    /**
     * Waits until every call has counted down.
     *
     * @param timeout the longest wait
     *
     * @throws io.fabricrpc.api.PeerFailedException if a destination fails first
     * @throws RemoteCallsFailedException if calls counted by a CONSUMED synchronizer threw at their destination
     * @throws io.fabricrpc.messaging.ChannelPoisonedException if a destination dropped a channel with calls pending
     * @throws SynchronizerTimeoutException if calls are still pending after {@code timeout}
     */
    public void await(Duration timeout) {
        long start = System.nanoTime();
        long limit = timeout.toNanos();
        int polls = 0;
        while (poll() > 0) {
            if ((polls & 63) == 0) {
                for (int i = 0; i < pending; i++) {
                    targets[i].pushBuffered(); // this thread's own batches: no helper thread needs to run for them
                }
            }
            if ((++polls & 63) == 0) {
                for (int i = 0; i < pending; i++) {
                    targets[i].checkAlive();
                }
                if (System.nanoTime() - start > limit) {
                    throw new SynchronizerTimeoutException("calls on " + pending + " channels still not " + mode.name().toLowerCase()
                            + " after " + timeout.toMillis() + " ms; first: " + targets[0].describe(marks[0]));
                }
                Thread.yield();
            }
            targets[0].helpWhileWaiting();
            Thread.onSpinWait();
        }
    }

    /**
     * Adds a call that counts down when {@code target} reaches {@code mark}. Used by the fabric. Marks of one
     * target grow monotonically (calls on one channel complete in order), so one entry per target suffices.
     *
     * @param target the channel the call went through
     * @param mark the channel position at which the call counts down
     */
    public void add(SyncTarget target, long mark) {
        if (last < pending && targets[last] == target) {
            marks[last] = Math.max(marks[last], mark);
            return;
        }
        for (int i = 0; i < pending; i++) {
            if (targets[i] == target) {
                marks[i] = Math.max(marks[i], mark);
                last = i;
                return;
            }
        }
        if (pending == targets.length) {
            targets = Arrays.copyOf(targets, pending * 2);
            marks = Arrays.copyOf(marks, pending * 2);
        }
        targets[pending] = target;
        marks[pending] = mark;
        last = pending;
        pending++;
    }

    private int poll() {
        int i = 0;
        while (i < pending) {
            if (targets[i].reached(marks[i])) {
                pending--;
                targets[i] = targets[pending];
                marks[i] = marks[pending];
                targets[pending] = null;
            } else {
                i++;
            }
        }
        return pending;
    }

    /**
     * Calls a CONSUMED synchronizer counts ran and threw at their destination: the cause carries the latest one's class
     * name and message (as the receiver reported them, truncated); every failure is also on the receiver's error
     * listener. The calls still count down.
     */
    public static final class RemoteCallsFailedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        /**
         * Creates the exception.
         *
         * @param message how many calls threw, where, and the latest failure
         * @param cause the latest failure, as text
         */
        public RemoteCallsFailedException(String message, io.fabricrpc.api.RemoteInvocationException cause) {
            super(message, cause);
        }
    }

    /** Calls did not count down in time although their destinations are alive. */
    public static final class SynchronizerTimeoutException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        /**
         * Creates the exception.
         *
         * @param message how many channels are pending and the first one's state
         */
        public SynchronizerTimeoutException(String message) {
            super(message);
        }
    }
}
