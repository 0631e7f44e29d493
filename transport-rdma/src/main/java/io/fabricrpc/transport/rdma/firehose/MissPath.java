package io.fabricrpc.transport.rdma.firehose;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The locked half of a {@link FirehoseCache} pin attempt, once the lock-free hits did not cover the segment: under the
 * table lock, check room, take the remaining buckets, evict victims and insert the missing buckets as
 * {@code REGISTERING}; then, without the lock, deregister the evicted, register the new (publishing {@code READY} or
 * {@code FAILED} under the lock) and wait for buckets another pinner registers. The pinning thread does all of it;
 * {@code evictedForCommit} and the {@code settled} condition are guarded by the table lock.
 *
 * @param <R> the registration type of the {@link Registrar}
 */
final class MissPath<R> {
    private final ReentrantLock lock; // the cache's table lock
    private final Condition settled; // a REGISTERING bucket became READY or FAILED
    private final BucketTable<R> table;
    private final Registrar<R> registrar;
    private final Room room;
    private final Victims<R> victims;
    private final CacheCounters counters;
    private final int shift;
    private final long bucketSize;
    private final long pinTimeoutNanos;
    private List<Bucket<R>> evictedForCommit; // guarded by lock: hands commitLocked's evictions to its caller

    MissPath(ReentrantLock lock, BucketTable<R> table, Registrar<R> registrar, Room room, Victims<R> victims,
             CacheCounters counters, int bucketSize, long pinTimeoutNanos) {
        this.lock = lock;
        this.settled = lock.newCondition();
        this.table = table;
        this.registrar = registrar;
        this.room = room;
        this.victims = victims;
        this.counters = counters;
        this.shift = Integer.numberOfTrailingZeros(bucketSize);
        this.bucketSize = bucketSize;
        this.pinTimeoutNanos = pinTimeoutNanos;
    }

    /**
     * All or nothing: fills the null entries of {@code got} (buckets {@code first, first + 1, ...}), whose other
     * entries hold references the caller took lock-free. {@code me} as in {@link Room#mayTakeRoomLocked}.
     *
     * @return true with every bucket referenced and READY; false if there is no room now, holding no references
     */
    boolean take(MemorySegment segment, Bucket<R>[] got, long first, Room.Waiter me, long deadline) {
        List<Bucket<R>> dying = null;
        List<Bucket<R>> created = null;
        boolean noRoom = false;
        boolean wasClosed;
        lock.lock();
        try {
            wasClosed = room.closedLocked();
            int missing = 0;
            long reusedVictimBytes = 0; // victims this pin takes back are not evictable for it
            for (int i = 0; i < got.length; i++) {
                if (got[i] == null) {
                    Bucket<R> b = table.get(first + i);
                    if (b == null) {
                        missing++;
                    } else if (b.refs.get() == 0) {
                        reusedVictimBytes += bucketSize;
                    }
                }
            }
            long need = missing * bucketSize;
            boolean mayTakeRoom = room.mayTakeRoomLocked(me);
            if (wasClosed || need > 0
                    && (!mayTakeRoom || room.overflowsLocked(need, victims.bytesLocked() - reusedVictimBytes))) {
                dying = victims.releaseLocked(got); // all or nothing: wait holding no references
                noRoom = true;
            } else {
                created = commitLocked(got, first, need, missing);
                dying = evictedForCommit;
                evictedForCommit = null;
                if (me != null) {
                    room.admittedLocked(me);
                }
            }
        } finally {
            lock.unlock();
        }
        if (noRoom) {
            victims.deregisterAll(dying);
            if (wasClosed) {
                throw new FirehoseException("pin of " + segment.byteSize() + " bytes on a closed firehose cache");
            }
            return false;
        }
        try {
            deregisterEvicted(dying, created);
            registerAll(created);
            awaitReady(got, deadline);
        } catch (RuntimeException e) {
            victims.releaseQuietly(got);
            throw e;
        }
        return true;
    }

    /**
     * Under the lock, once the room check passed: takes the remaining buckets (victims come back, buckets being
     * registered are shared), evicts the oldest victims for the missing ones (left in {@link #evictedForCommit})
     * and inserts those as REGISTERING. Returns the created buckets.
     */
    private List<Bucket<R>> commitLocked(Bucket<R>[] got, long first, long need, int missing) {
        int hitCount = 0;
        for (int i = 0; i < got.length; i++) {
            if (got[i] != null) {
                hitCount++;
                continue;
            }
            Bucket<R> b = table.get(first + i);
            if (b != null) {
                if (b.refs.get() == 0) { // 0 -> 1 only under the lock: a victim comes back
                    victims.unlinkLocked(b);
                    b.refs.set(1);
                    counters.victimHits.increment();
                } else {
                    b.refs.incrementAndGet(); // >= 1: in use or REGISTERING; cannot reach 0 without the lock
                }
                got[i] = b;
                hitCount++;
            }
        }
        long evictedBytes = 0;
        List<Bucket<R>> dying = null;
        while (room.overflowsLocked(need, evictedBytes)) { // room: the oldest victims go first
            dying = victims.evictOldestLocked(dying);
            evictedBytes += bucketSize;
        }
        List<Bucket<R>> created = null;
        for (int i = 0; i < got.length; i++) {
            if (got[i] == null) {
                Bucket<R> b = new Bucket<>(first + i, (first + i) << shift, 1);
                table.put(b);
                got[i] = b;
                created = Bucket.add(created, b);
            }
        }
        // The evicted bytes become this pin's; they are deregistered before anything is registered.
        room.accountLocked(need - evictedBytes);
        counters.hits.add(hitCount);
        counters.misses.add(missing);
        evictedForCommit = dying;
        return created;
    }

    /** Evicted victims are deregistered before this pin registers: the device never exceeds the accounting. */
    private void deregisterEvicted(List<Bucket<R>> dying, List<Bucket<R>> created) {
        if (dying == null) {
            return;
        }
        RuntimeException failure = null;
        long leaked = 0;
        for (Bucket<R> b : dying) {
            try {
                registrar.deregister(b.registration);
                counters.evictions.increment();
            } catch (RuntimeException e) {
                leaked += bucketSize;
                failure = failure == null ? e : failure;
            }
        }
        if (failure != null) {
            // The leaked bytes stay registered: this pin's new buckets give their room back and fail.
            lock.lock();
            try {
                for (Bucket<R> b : created) {
                    b.failure = failure;
                    b.state = Bucket.FAILED; // volatile: publishes failure
                    table.remove(b);
                }
                room.accountLocked(leaked - (long) created.size() * bucketSize);
                settled.signalAll();
            } finally {
                lock.unlock();
            }
            throw new FirehoseException("deregistering an evicted firehose bucket failed (" + leaked
                    + " bytes stay registered): " + failure.getMessage(), failure);
        }
    }

    private void registerAll(List<Bucket<R>> created) {
        if (created == null) {
            return;
        }
        RegistrationMissEvent event = new RegistrationMissEvent(); // a miss: system calls follow, so a slow path
        event.begin();
        RuntimeException failure = null;
        for (Bucket<R> b : created) {
            if (failure == null) {
                try {
                    b.registration = registrar.register(b.address, bucketSize);
                } catch (RuntimeException e) {
                    failure = new FirehoseException("registering firehose bucket 0x" + Long.toHexString(b.address)
                            + " (" + bucketSize + " bytes) failed: " + e.getMessage()
                            + " (every byte of a touched bucket must be mapped; try a smaller bucket size)", e);
                }
            }
            lock.lock();
            try {
                if (failure == null) {
                    b.state = Bucket.READY; // volatile: publishes b.registration to lock-free hits
                } else {
                    b.failure = failure;
                    b.state = Bucket.FAILED; // volatile: publishes b.failure
                    table.remove(b);
                    room.accountLocked(-bucketSize);
                    room.signalHeadLocked();
                }
                settled.signalAll();
            } finally {
                lock.unlock();
            }
        }
        event.end();
        if (event.shouldCommit()) {
            event.bytes = created.size() * bucketSize;
            event.buckets = created.size();
            event.failed = failure != null;
            event.commit();
        }
        if (failure != null) {
            throw failure;
        }
    }

    /** Waits for buckets another pinner is registering (one registration call each), bounded by the deadline. */
    private void awaitReady(Bucket<R>[] got, long deadline) {
        for (Bucket<R> b : got) {
            if (b.state == Bucket.READY) {
                continue;
            }
            lock.lock();
            try {
                while (b.state == Bucket.REGISTERING) {
                    long remaining = deadline - System.nanoTime();
                    if (remaining <= 0) {
                        throw new FirehoseException("firehose bucket 0x" + Long.toHexString(b.address)
                                + " still registering by another thread after "
                                + TimeUnit.NANOSECONDS.toMillis(pinTimeoutNanos) + " ms");
                    }
                    settled.awaitNanos(remaining);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new FirehoseException("interrupted while waiting for bucket 0x" + Long.toHexString(b.address));
            } finally {
                lock.unlock();
            }
            if (b.state == Bucket.FAILED) {
                throw new FirehoseException("firehose bucket 0x" + Long.toHexString(b.address)
                        + " could not be registered: " + b.failure.getMessage(), b.failure);
            }
        }
    }
}
