package io.fabricrpc.transport.rdma.firehose;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The release side of a {@link FirehoseCache}: dropping references, the victim FIFO (eviction order: oldest
 * unreferenced bucket first) and the deferred deregistration of dead buckets. A bucket whose count drops to zero joins
 * the FIFO still registered; while the FIFO holds more than {@code maxVictimBytes}, or a miss needs room, the oldest
 * is marked dead under the table lock and deregistered by the same thread after releasing it. The FIFO links and
 * {@code victimBytes} are guarded by the table lock ({@code ...Locked} methods expect it held); any releasing, pinning
 * or closing thread writes them. The registrar is called without the lock.
 *
 * @param <R> the registration type of the {@link Registrar}
 */
final class Victims<R> {
    private final ReentrantLock lock; // the cache's table lock
    private final BucketTable<R> table;
    private final Registrar<R> registrar;
    private final Room room;
    private final CacheCounters counters;
    private final long bucketSize;
    private final long maxVictimBytes;
    private Bucket<R> oldestVictim; // guarded by lock
    private Bucket<R> newestVictim; // guarded by lock
    private long victimBytes; // guarded by lock

    Victims(ReentrantLock lock, BucketTable<R> table, Registrar<R> registrar, Room room, CacheCounters counters,
            long bucketSize, long maxVictimBytes) {
        this.lock = lock;
        this.table = table;
        this.registrar = registrar;
        this.room = room;
        this.counters = counters;
        this.bucketSize = bucketSize;
        this.maxVictimBytes = maxVictimBytes;
    }

    /** Bytes of victim buckets (registered, unreferenced). */
    long bytesLocked() {
        return victimBytes;
    }

    /** Victim bucket addresses, oldest first. */
    long[] addressesLocked() {
        ArrayList<Long> out = new ArrayList<>();
        for (Bucket<R> b = oldestVictim; b != null; b = b.newer) {
            out.add(b.address);
        }
        return out.stream().mapToLong(Long::longValue).toArray();
    }

    // ------------------------------------------------------------------ release

    /** Drops one reference; returns the list of buckets the caller must deregister (victim FIFO overflow). */
    List<Bucket<R>> unref(Bucket<R> b, List<Bucket<R>> dying) {
        while (true) {
            int r = b.refs.get();
            if (r > 1) {
                if (b.refs.compareAndSet(r, r - 1)) {
                    return dying;
                }
                continue;
            }
            if (r != 1) {
                throw new IllegalStateException("firehose bucket 0x" + Long.toHexString(b.address)
                        + " released with reference count " + r);
            }
            lock.lock();
            try {
                if (!b.refs.compareAndSet(1, 0)) {
                    continue; // a lock-free hit came in: retry as r > 1
                }
                return becameUnreferenced(b, dying);
            } finally {
                lock.unlock();
            }
        }
    }

    /** Under the lock: gives back the references a failed attempt took; returns victims to deregister. */
    List<Bucket<R>> releaseLocked(Bucket<R>[] got) {
        List<Bucket<R>> dying = null;
        for (int i = 0; i < got.length; i++) {
            Bucket<R> b = got[i];
            if (b == null) {
                continue;
            }
            got[i] = null;
            if (b.refs.decrementAndGet() == 0) { // we hold the lock: 1 -> 0 is ours to complete
                dying = becameUnreferenced(b, dying);
            }
        }
        return dying;
    }

    void releaseQuietly(Bucket<R>[] got) {
        List<Bucket<R>> dying = null;
        for (Bucket<R> b : got) {
            if (b != null) {
                dying = unref(b, dying);
            }
        }
        try {
            deregisterAll(dying);
        } catch (RuntimeException ignored) {
            // the pin's own failure is what the caller sees; the accounting still holds the leaked bytes
        }
    }

    /** Under the lock, with the count just set to 0: the bucket joins the victim FIFO, overflow is evicted. */
    private List<Bucket<R>> becameUnreferenced(Bucket<R> b, List<Bucket<R>> dying) {
        if (b.state != Bucket.READY) {
            return dying; // failed registration: its room was already given back
        }
        if (room.closedLocked()) {
            return markDead(b, dying);
        }
        b.older = newestVictim;
        b.newer = null;
        if (newestVictim != null) {
            newestVictim.newer = b;
        } else {
            oldestVictim = b;
        }
        newestVictim = b;
        victimBytes += bucketSize;
        while (victimBytes > maxVictimBytes) {
            dying = evictOldestLocked(dying);
        }
        room.signalHeadLocked(); // a victim is room for a waiting miss
        return dying;
    }

    /** Deregisters dead buckets outside the lock, then gives their bytes back. */
    void deregisterAll(List<Bucket<R>> dying) {
        if (dying == null) {
            return;
        }
        long freed = 0;
        RuntimeException failure = null;
        for (Bucket<R> b : dying) {
            try {
                registrar.deregister(b.registration);
                counters.evictions.increment();
                freed += bucketSize;
            } catch (RuntimeException e) {
                failure = failure == null ? e : failure; // those bytes stay accounted: they stay registered
            }
        }
        room.giveBack(freed);
        if (failure != null) {
            throw new FirehoseException("deregistering a firehose victim failed: " + failure.getMessage(), failure);
        }
    }

    // ------------------------------------------------------------------ eviction (under the lock)

    /** The oldest victim goes: dead, out of the table, into {@code dying}. There must be one. */
    List<Bucket<R>> evictOldestLocked(List<Bucket<R>> dying) {
        Bucket<R> victim = oldestVictim;
        unlinkLocked(victim);
        return markDead(victim, dying);
    }

    /** Every victim goes (close). */
    List<Bucket<R>> evictAllLocked(List<Bucket<R>> dying) {
        while (oldestVictim != null) {
            dying = evictOldestLocked(dying);
        }
        return dying;
    }

    /** Takes {@code b} off the FIFO: it is evicted, or a pin takes it back. */
    void unlinkLocked(Bucket<R> b) {
        if (b.older != null) {
            b.older.newer = b.newer;
        } else {
            oldestVictim = b.newer;
        }
        if (b.newer != null) {
            b.newer.older = b.older;
        } else {
            newestVictim = b.older;
        }
        b.older = null;
        b.newer = null;
        victimBytes -= bucketSize;
    }

    private List<Bucket<R>> markDead(Bucket<R> b, List<Bucket<R>> dying) {
        b.refs.set(-1); // dead: no pin can take it (counts move 0 -> 1 only under this lock)
        table.remove(b);
        return Bucket.add(dying, b);
    }
}
