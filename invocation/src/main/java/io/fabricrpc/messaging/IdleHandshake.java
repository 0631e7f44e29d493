package io.fabricrpc.messaging;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Lets a helper thread (the agent) park while it has nothing to watch without missing the call that gives it work:
 * a Dekker handshake on two volatile stores. A producer publishes its work with a volatile store, then calls
 * {@link #wake()}, which reads {@code sleeps}; the helper makes {@code sleeps} odd, then looks for work once more
 * before it parks. Volatile accesses are sequentially consistent, so at least one side sees the other's store: either
 * the helper finds the work, or the producer finds it asleep and unparks it. Words: {@code sleeps} is the helper's
 * alone (odd while it parks or is about to); {@code wakes} is a position producers advance by CAS to the sleep they
 * end, so one unpark per sleep.
 */
public final class IdleHandshake {
    private static final VarHandle WAKES;

    static {
        try {
            WAKES = MethodHandles.lookup().findVarHandle(IdleHandshake.class, "wakes", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final BooleanSupplier workArrived;
    // Helper thread only.
    private volatile Thread sleeper;
    private volatile long sleeps;
    // Producers, by CAS: the latest sleep a producer ended with an unpark.
    @SuppressWarnings("unused") // through WAKES
    private volatile long wakes;

    /** @param workArrived the helper's last look before it parks: true if there is work after all */
    public IdleHandshake(BooleanSupplier workArrived) {
        this.workArrived = workArrived;
    }

    /**
     * Helper thread: parks for at most {@code maxNanos} (0: until woken) unless the last look finds work. May return
     * early (a wake-up, or spuriously): the caller looks again.
     */
    public void parkUnlessWork(long maxNanos) {
        sleeper = Thread.currentThread(); // before the volatile store of sleeps, which wake() reads first
        long sleep = sleeps + 1;
        sleeps = sleep; // volatile store (odd: asleep), then the last look: the helper's half of the handshake
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
            sleeps = sleep + 1; // even: awake
        }
    }

    /** Producer, after the volatile store that published its work: unparks the helper if it sleeps or is about to. */
    public void wake() {
        long sleep = sleeps; // volatile load after the producer's volatile store: the producer's half of the handshake
        if ((sleep & 1) != 0) {
            long woken = (long) WAKES.getAcquire(this);
            // The first waker of this sleep unparks; later ones need not (casWakes: monotonic, up to this sleep).
            if (woken < sleep && WAKES.compareAndSet(this, woken, sleep)) {
                LockSupport.unpark(sleeper);
            }
        }
    }

    /** Whether the helper announced that it parks (tests and diagnostics). */
    public boolean isAsleep() {
        return (sleeps & 1) != 0;
    }
}
