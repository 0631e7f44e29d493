package io.fabricrpc.transport.rdma.firehose;

import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The local firehose (Bell and Nishtala, Firehose-SMP §3.1, §4): a registration cache for memory the application
 * owns. Memory is registered a whole bucket at a time ({@link Config#bucketSize()}, aligned); each bucket has a
 * reference count. A bucket whose count drops to zero stays registered in a victim FIFO, so pinning it again costs no
 * system call; victims are deregistered oldest first when a miss needs room or when the FIFO holds more than
 * {@link Config#maxVictimBytes()}. The bytes registered by this cache (buckets in use, victims, buckets being
 * registered or deregistered) never exceed {@code maxPinnedBytes + maxVictimBytes}.
 *
 * <p>Every byte of a bucket that a pinned segment touches is registered, so those bytes must be mapped memory of
 * this process: allocate buffers bucket-aligned in whole buckets, or use the page size as the bucket size. Memory must
 * stay mapped while the cache may hold a registration of it: unmapping it and mapping other memory at the same address
 * would let a cached registration reach the old pages. {@link #close} deregisters everything.
 *
 * <h2>Locking design (Firehose-SMP §3.4, §4)</h2>
 * <ul>
 *   <li>The bucket table ({@link BucketTable}) is read without a lock and written under the table lock. A bucket's count is an atomic integer: {@code > 0} in use, {@code 0}
 *       victim, {@code -1} dead (removed from the table, being deregistered). A pin whose buckets are all in use and
 *       registered is a <em>hit</em> that only increments counts by compare-and-set: no lock.</li>
 *   <li>One table lock guards the transitions {@code 0 <-> 1} (a bucket enters or leaves the victim FIFO), the
 *       victim FIFO, the byte accounting, the creation of buckets and the admission queue of waiting pinners. It is
 *       held for a bounded, short time and <em>never</em> across a registration or deregistration call: a miss
 *       inserts its buckets as {@code REGISTERING} and reserves their bytes under the lock, registers without it,
 *       then publishes {@code READY}. Other pinners of a {@code REGISTERING} bucket wait for that one call (the
 *       paper's PENDING state); pins of other buckets proceed meanwhile. Evicted victims are marked dead and removed
 *       under the lock; the evicting thread deregisters them after releasing it and only then registers its own
 *       buckets, so the device never holds more than the accounted bytes.</li>
 *   <li>A pin takes all its buckets or none (references taken during a failed attempt are returned before it
 *       waits): no thread waits for room while holding references, so pinners cannot deadlock one another.</li>
 *   <li>Fairness: {@link #pin} callers that find no room queue in FIFO order; only the head may take new room, and
 *       {@link #tryPin} misses do not overtake a non-empty queue. Hits never wait for the queue (they take no room).
 *       A waiter gives up at its deadline with a {@link FirehoseException}, so a thread that waits for room only its
 *       own pins hold cannot hang.</li>
 * </ul>
 *
 * <p>Thread-safe. A hit takes no lock and allocates only its handle (plus the bucket array of a pin spanning several
 * buckets): the table is keyed by primitive bucket index ({@link BucketTable}) and the statistics are adders. A miss
 * takes the table lock twice and makes the registration calls.
 *
 * <p>This class holds the API and the lock-free hit path; the parts behind it are the bucket table, the
 * {@link Room} (byte accounting, admission queue), {@link MissPath}, {@link Victims} (release, eviction) and
 * {@link CacheCounters}.
 *
 * @param <R> the registration type of the {@link Registrar}
 */
public final class FirehoseCache<R> implements AutoCloseable {
    /**
     * @param bucketSize     bytes per bucket: a power of two, at least 4096 (the page)
     * @param maxPinnedBytes M: bytes the cache may keep registered for buckets in use
     * @param maxVictimBytes MAXVICTIM: bytes of unreferenced buckets kept registered; also the extra room misses may
     *                       use, so the hard bound is {@code maxPinnedBytes + maxVictimBytes}
     * @param pinTimeoutNanos how long {@link #pin} waits for room (and any pinner for another's registration)
     */
    public record Config(int bucketSize, long maxPinnedBytes, long maxVictimBytes, long pinTimeoutNanos) {
        public static final int DEFAULT_BUCKET_SIZE = 64 * 1024;

        public Config {
            if (bucketSize < 4096 || Integer.bitCount(bucketSize) != 1) {
                throw new IllegalArgumentException("firehose bucket size must be a power of two >= 4096, got "
                        + bucketSize);
            }
            if (maxPinnedBytes < bucketSize || maxVictimBytes < 0 || pinTimeoutNanos <= 0) {
                throw new IllegalArgumentException("firehose bounds need maxPinnedBytes >= bucketSize (" + bucketSize
                        + "), maxVictimBytes >= 0 and pinTimeoutNanos > 0; got " + maxPinnedBytes + ", "
                        + maxVictimBytes + ", " + pinTimeoutNanos);
            }
        }

        /** 64 KiB buckets, the given bounds, a 10 s pin timeout. */
        public static Config of(long maxPinnedBytes, long maxVictimBytes) {
            return new Config(DEFAULT_BUCKET_SIZE, maxPinnedBytes, maxVictimBytes, TimeUnit.SECONDS.toNanos(10));
        }

        public long boundBytes() {
            return maxPinnedBytes + maxVictimBytes;
        }
    }

    private final Config config;
    private final int shift;
    private final long bucketSize;
    private final BucketTable<R> table = new BucketTable<>();
    /** The table lock: guards the state of {@link Room}, {@link Victims} and {@link MissPath}, and table writes. */
    private final ReentrantLock lock = new ReentrantLock();
    private final CacheCounters counters = new CacheCounters();
    private final Room room;
    private final Victims<R> victims;
    private final MissPath<R> miss;

    public FirehoseCache(Config config, Registrar<R> registrar) {
        this.config = config;
        this.bucketSize = config.bucketSize();
        this.shift = Integer.numberOfTrailingZeros(config.bucketSize());
        this.room = new Room(lock, config.boundBytes());
        this.victims = new Victims<>(lock, table, registrar, room, counters, bucketSize, config.maxVictimBytes());
        this.miss = new MissPath<>(lock, table, registrar, room, victims, counters, config.bucketSize(),
                config.pinTimeoutNanos());
    }

    public Config config() {
        return config;
    }

    /**
     * Pins {@code segment} if that needs no waiting for room: a hit, or a miss that fits now (evicting victims if
     * needed) while no {@link #pin} caller is queued. A miss registers its buckets before returning, and a bucket
     * another thread is registering is waited for (one registration call).
     *
     * @return the handle, or null if the bound would be exceeded (or waiting pinners come first)
     * @throws IllegalArgumentException if the segment is not native, empty, or needs more buckets than the bound
     * @throws FirehoseException if a registration fails
     */
    public FirehoseHandle<R> tryPin(MemorySegment segment) {
        return attempt(segment, null, System.nanoTime() + config.pinTimeoutNanos());
    }

    /**
     * Pins {@code segment}, waiting in FIFO order behind earlier waiters for room, at most
     * {@link Config#pinTimeoutNanos()}.
     *
     * @throws FirehoseException if no room came before the deadline (the message gives the bound and usage) or a
     *                           registration failed
     * @throws IllegalArgumentException as {@link #tryPin}
     */
    public FirehoseHandle<R> pin(MemorySegment segment) {
        long deadline = System.nanoTime() + config.pinTimeoutNanos();
        FirehoseHandle<R> handle = attempt(segment, null, deadline);
        if (handle != null) {
            return handle;
        }
        Room.Waiter me = room.enqueue();
        try {
            while (true) {
                lock.lock();
                try {
                    while (!room.isHeadLocked(me) || !me.signalled) {
                        long remaining = deadline - System.nanoTime();
                        if (remaining <= 0) {
                            throw new FirehoseException("no room to pin " + segment.byteSize() + " bytes at 0x"
                                    + Long.toHexString(segment.address()) + " within "
                                    + TimeUnit.NANOSECONDS.toMillis(config.pinTimeoutNanos()) + " ms: "
                                    + room.accountedBytes() + " of " + room.bound() + " bytes registered, "
                                    + victims.bytesLocked() + " of them victims, " + (room.waitingLocked() - 1)
                                    + " other waiters");
                        }
                        me.wakeup.awaitNanos(remaining);
                    }
                    me.signalled = false;
                } finally {
                    lock.unlock();
                }
                handle = attempt(segment, me, deadline);
                if (handle != null) {
                    return handle;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FirehoseException("interrupted while waiting to pin " + segment.byteSize() + " bytes");
        } finally {
            room.leave(me);
        }
    }

    /**
     * Releases a pin. Buckets whose count drops to zero become victims (still registered); if the victims then
     * exceed {@link Config#maxVictimBytes()} the oldest are deregistered by this call.
     *
     * @throws IllegalArgumentException if the handle is not from this cache or was already released
     */
    public void release(FirehoseHandle<R> handle) {
        if (handle == null || handle.owner() != this || !handle.markReleased()) {
            throw new IllegalArgumentException("release of an unknown or already released firehose handle: " + handle
                    + (handle != null && handle.owner() != this ? " (it belongs to another cache)" : ""));
        }
        List<Bucket<R>> dying = null;
        for (int i = 0, n = handle.bucketCount(); i < n; i++) {
            dying = victims.unref(handle.bucket(i), dying);
        }
        victims.deregisterAll(dying);
    }

    /** Bytes registered or being registered or deregistered by this cache now (at most the bound). */
    public long registeredBytes() {
        return room.accountedBytes();
    }

    /** Bytes of victim buckets (registered, unreferenced). */
    public long victimBytes() {
        lock.lock();
        try {
            return victims.bytesLocked();
        } finally {
            lock.unlock();
        }
    }

    /** Victim bucket addresses, oldest first (for tests and diagnostics; takes the table lock). */
    public long[] victimAddresses() {
        lock.lock();
        try {
            return victims.addressesLocked();
        } finally {
            lock.unlock();
        }
    }

    /** Pinners queued for room now (tests and diagnostics). */
    public int waitingPinners() {
        lock.lock();
        try {
            return room.waitingLocked();
        } finally {
            lock.unlock();
        }
    }

    /** Buckets found registered (in use or victim) by a pin. */
    public long hits() {
        return counters.hits.sum();
    }

    /** Of {@link #hits()}, the ones that took a bucket off the victim FIFO. */
    public long victimHits() {
        return counters.victimHits.sum();
    }

    /** Buckets a pin had to register. */
    public long misses() {
        return counters.misses.sum();
    }

    /** Victim buckets deregistered. */
    public long evictions() {
        return counters.evictions.sum();
    }

    /** The reference count of the bucket holding {@code address}, or -1 if it is not registered (tests). */
    public int referenceCount(long address) {
        Bucket<R> b = table.get(address >>> shift);
        return b == null ? -1 : Math.max(-1, b.refs.get());
    }

    /**
     * One all-or-nothing attempt. {@code me} is null for a caller outside the queue (may take room only if nobody
     * waits) or the caller's queue entry (may take room only at the head).
     */
    private FirehoseHandle<R> attempt(MemorySegment segment, Room.Waiter me, long deadline) {
        if (!segment.isNative() || segment.byteSize() <= 0) {
            throw new IllegalArgumentException("firehose pins non-empty native segments only, got " + segment);
        }
        long first = segment.address() >>> shift;
        long last = (segment.address() + segment.byteSize() - 1) >>> shift;
        int count = (int) (last - first + 1);
        if ((long) count * bucketSize > room.bound()) {
            throw new IllegalArgumentException("segment of " + segment.byteSize() + " bytes spans " + count
                    + " buckets of " + bucketSize + ", more than the bound of " + room.bound() + " bytes");
        }
        if (count == 1) { // the common lock-free hit, without the array
            Bucket<R> b = table.get(first);
            if (b != null && b.state == Bucket.READY && b.refInUse()) {
                counters.hits.increment();
                return new FirehoseHandle<>(this, segment, b);
            }
        }
        @SuppressWarnings("unchecked")
        Bucket<R>[] got = new Bucket[count];
        int have = 0;
        for (int i = 0; i < count; i++) { // lock-free hits on buckets in use
            Bucket<R> b = table.get(first + i);
            if (b != null && b.state == Bucket.READY && b.refInUse()) {
                got[i] = b;
                have++;
            }
        }
        if (have == count) {
            counters.hits.add(count);
            return new FirehoseHandle<>(this, segment, got);
        }
        return miss.take(segment, got, first, me, deadline) ? new FirehoseHandle<>(this, segment, got) : null;
    }

    /**
     * Deregisters every unreferenced bucket now and every bucket in use when its last pin is released; later pins
     * that need the table lock (misses, victim hits) fail, lock-free hits on buckets still in use succeed until those
     * are released. Idempotent.
     */
    @Override
    public void close() {
        List<Bucket<R>> dying;
        lock.lock();
        try {
            if (room.closedLocked()) {
                return;
            }
            room.closeLocked();
            dying = victims.evictAllLocked(null);
        } finally {
            lock.unlock();
        }
        victims.deregisterAll(dying);
    }

    @Override
    public String toString() {
        return "FirehoseCache[bucket=" + bucketSize + ", registered=" + room.accountedBytes() + "/" + room.bound()
                + ", hits=" + counters.hits.sum() + ", misses=" + counters.misses.sum() + ", evictions="
                + counters.evictions.sum() + "]";
    }
}
