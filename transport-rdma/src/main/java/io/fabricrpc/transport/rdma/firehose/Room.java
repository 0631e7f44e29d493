package io.fabricrpc.transport.rdma.firehose;

import java.util.ArrayDeque;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The room of a {@link FirehoseCache}: the bytes accounted against its bound (buckets in use, victims, buckets being
 * registered or deregistered), whether it is closed, and the FIFO queue of {@link FirehoseCache#pin} callers waiting
 * for room, of which only the head may take new room. All of it is guarded by the cache's table lock, which
 * {@code ...Locked} methods expect held and the others take; any pinning or releasing thread writes it.
 * {@code accountedBytes} is also volatile, so statistics readers see a recent value without the lock.
 */
final class Room {
    /** One queued {@link FirehoseCache#pin} caller; its fields are guarded by the table lock. */
    static final class Waiter {
        final Condition wakeup;
        boolean signalled = true; // a fresh waiter retries once before sleeping (room may have come meanwhile)

        Waiter(Condition wakeup) {
            this.wakeup = wakeup;
        }
    }

    private final ReentrantLock lock; // the cache's table lock
    private final long bound;
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>(); // guarded by lock
    private volatile long accountedBytes; // written under lock; volatile so stats readers see a recent value
    private boolean closed; // guarded by lock

    Room(ReentrantLock lock, long bound) {
        this.lock = lock;
        this.bound = bound;
    }

    long bound() {
        return bound;
    }

    /** Bytes registered or being registered or deregistered now; with or without the lock. */
    long accountedBytes() {
        return accountedBytes;
    }

    /** Whether taking {@code need} more bytes, after {@code freed} bytes leave, passes the bound. */
    boolean overflowsLocked(long need, long freed) {
        return accountedBytes - freed + need > bound;
    }

    /** Adds {@code delta} (negative: gives bytes back); the volatile write publishes it to statistics readers. */
    void accountLocked(long delta) {
        accountedBytes += delta;
    }

    /** Gives back the bytes of deregistered buckets and wakes the head of the queue, which may fit now. */
    void giveBack(long freed) {
        lock.lock();
        try {
            accountedBytes -= freed;
            signalHeadLocked();
        } finally {
            lock.unlock();
        }
    }

    boolean closedLocked() {
        return closed;
    }

    /** Closes the room (no more misses) and wakes every waiter, so each fails at once. */
    void closeLocked() {
        closed = true;
        for (Waiter w : waiters) {
            w.signalled = true;
            w.wakeup.signal();
        }
    }

    // ------------------------------------------------------------------ admission queue

    /** Queues a new waiter at the tail. */
    Waiter enqueue() {
        Waiter me = new Waiter(lock.newCondition());
        lock.lock();
        try {
            waiters.addLast(me);
        } finally {
            lock.unlock();
        }
        return me;
    }

    /** Leaves the queue (whether or not the waiter got its pin) and passes the turn on. */
    void leave(Waiter me) {
        lock.lock();
        try {
            waiters.remove(me);
            signalHeadLocked(); // the next waiter may fit in what is left
        } finally {
            lock.unlock();
        }
    }

    /** {@code me} is null for a caller outside the queue (may take room only if nobody waits), else its entry. */
    boolean mayTakeRoomLocked(Waiter me) {
        return me == null ? waiters.isEmpty() : waiters.peekFirst() == me;
    }

    /** A queued caller took its room: it leaves the queue and the next one tries. */
    void admittedLocked(Waiter me) {
        waiters.remove(me);
        signalHeadLocked(); // the next waiter may fit too
    }

    boolean isHeadLocked(Waiter me) {
        return waiters.peekFirst() == me;
    }

    int waitingLocked() {
        return waiters.size();
    }

    void signalHeadLocked() {
        Waiter head = waiters.peekFirst();
        if (head != null) {
            head.signalled = true;
            head.wakeup.signal();
        }
    }
}
