package io.fabricrpc.messaging;

import io.fabricrpc.api.MessagingException;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * Who may drain a channel's waiting calls into its messenger (the sender or the fabric's agent): a monotonic claim
 * position, even while free, odd while held, advanced only by {@link #casClaim} (even to odd) and by the holder's
 * {@link #release} (odd to the next even value, a release store). Whoever holds it owns the waiting calls and the
 * messenger; the release publishes the holder's writes to the next holder. Re-entrant for its holder (a call run
 * while waiting for room may send on the same channel). Model: {@code model/waiting_calls_drain.pml}.
 */
public final class DrainClaim {
    private static final VarHandle POSITION;
    /** A claim wait that lasts this long fails: a holder drains for microseconds, not seconds. */
    private static final long STUCK_NANOS = TimeUnit.SECONDS.toNanos(10);

    static {
        try {
            POSITION = MethodHandles.lookup().findVarHandle(DrainClaim.class, "position", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final long stuckNanos;
    @SuppressWarnings("unused") // through POSITION
    private volatile long position;
    // Holder only (written after the CAS that claims, cleared before the release store).
    private Thread holder;
    private int holds;

    public DrainClaim() {
        this(STUCK_NANOS);
    }

    DrainClaim(long stuckNanos) {
        this.stuckNanos = stuckNanos;
    }

    /** Takes the claim if it is free or already the caller's; never waits. */
    public boolean tryClaim() {
        if (holder == Thread.currentThread()) { // only the holder can read itself here: it wrote the field
            holds++;
            return true;
        }
        long free = (long) POSITION.getAcquire(this);
        return (free & 1) == 0 && casClaim(free);
    }

    /**
     * Takes the claim, waiting while another thread holds it (spins, yields, then parks up to 50 us).
     *
     * @param what names the channel in the exception of a wait that exceeds the bound
     * @throws MessagingException after 10 s held by another thread (a holder that never releases)
     */
    public void claim(Supplier<String> what) {
        long start = 0;
        for (int step = 0; !tryClaim(); step++) {
            if (step < 100) {
                Thread.onSpinWait();
            } else if (step < 200) {
                Thread.yield();
            } else {
                if (start == 0) {
                    start = System.nanoTime();
                } else if (System.nanoTime() - start > stuckNanos) {
                    throw new MessagingException("the drain claim of " + what.get() + " stayed held by another thread "
                            + "for " + stuckNanos / 1_000_000 + " ms (claim position " + lvPosition() + ")");
                }
                LockSupport.parkNanos(Math.min(50_000, 1_000L << Math.min(step - 200, 6)));
            }
        }
    }

    /** CAS from the free position read to the next (odd) one: acquire, sees the previous holder's writes. */
    private boolean casClaim(long free) {
        if (!POSITION.compareAndSet(this, free, free + 1)) {
            return false;
        }
        holder = Thread.currentThread();
        holds = 1;
        return true;
    }

    /** Gives the claim back once the outermost hold ends: a release store of the next even position. */
    public void release() {
        if (--holds > 0) {
            return;
        }
        holder = null;
        POSITION.setRelease(this, (long) POSITION.getOpaque(this) + 1); // holder only: no one else moves it now
    }

    /** Whether the calling thread holds the claim. */
    public boolean heldByCurrentThread() {
        return holder == Thread.currentThread();
    }

    /** The position (acquire): odd while held. */
    public long lvPosition() {
        return (long) POSITION.getAcquire(this);
    }
}
