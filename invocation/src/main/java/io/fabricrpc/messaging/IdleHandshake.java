package io.fabricrpc.messaging;

import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Lets a helper thread (the agent) park while it has nothing to watch without missing the call that gives it work:
 * a Dekker handshake on two volatile stores. A producer publishes its work with a volatile store, then calls
 * {@link #wake()}, which reads {@code asleep}; the helper stores {@code asleep}, then looks for work once more before
 * it parks. Volatile accesses are sequentially consistent, so at least one side sees the other's store: either the
 * helper finds the work, or the producer finds it asleep and unparks it.
 */
public final class IdleHandshake {
    private final BooleanSupplier workArrived;
    private volatile Thread sleeper;
    private volatile boolean asleep;

    /** @param workArrived the helper's last look before it parks: true if there is work after all */
    public IdleHandshake(BooleanSupplier workArrived) {
        this.workArrived = workArrived;
    }

    /**
     * Helper thread: parks for at most {@code maxNanos} (0: until woken) unless the last look finds work. May return
     * early (a wake-up, or spuriously): the caller looks again.
     */
    public void parkUnlessWork(long maxNanos) {
        sleeper = Thread.currentThread(); // before the volatile store of asleep, which wake() reads first
        asleep = true; // volatile store, then the last look: the helper's half of the handshake
        try {
            if (workArrived.getAsBoolean()) {
                return;
            }
            if (maxNanos > 0) {
                LockSupport.parkNanos(this, maxNanos);
            } else {
                LockSupport.park(this);
            }
        } finally {
            asleep = false;
        }
    }

    /** Producer, after the volatile store that published its work: unparks the helper if it sleeps or is about to. */
    public void wake() {
        if (asleep) { // volatile load after the producer's volatile store: the producer's half of the handshake
            asleep = false; // the first waker unparks; later ones until the helper sleeps again need not
            LockSupport.unpark(sleeper);
        }
    }

    /** Whether the helper announced that it parks (tests and diagnostics). */
    public boolean isAsleep() {
        return asleep;
    }
}
