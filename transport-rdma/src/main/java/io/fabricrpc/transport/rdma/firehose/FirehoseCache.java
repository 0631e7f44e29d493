package io.fabricrpc.transport.rdma.firehose;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.Condition;
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

    static final int REGISTERING = 0;
    static final int READY = 1;
    static final int FAILED = 2;

    /** One aligned bucket. {@code refs} and {@code state} are shared; the FIFO links are guarded by the table lock. */
    static final class Bucket<R> {
        final long index;
        final long address;
        final java.util.concurrent.atomic.AtomicInteger refs;
        volatile int state = REGISTERING;
        R registration; // written before the volatile store of READY, read after a volatile load of READY
        RuntimeException failure; // likewise before FAILED
        Bucket<R> older; // victim FIFO links, guarded by the table lock
        Bucket<R> newer;

        Bucket(long index, long address, int refs) {
            this.index = index;
            this.address = address;
            this.refs = new java.util.concurrent.atomic.AtomicInteger(refs);
        }
    }

    private static final class Waiter {
        final Condition wakeup;
        boolean signalled = true; // a fresh waiter retries once before sleeping (room may have come meanwhile)

        Waiter(Condition wakeup) {
            this.wakeup = wakeup;
        }
    }

    private final Config config;
    private final Registrar<R> registrar;
    private final int shift;
    private final long bucketSize;
    private final long bound;
    private final BucketTable<R> table = new BucketTable<>();
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition settled = lock.newCondition(); // a REGISTERING bucket became READY or FAILED
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>(); // guarded by lock
    private Bucket<R> oldestVictim; // guarded by lock
    private Bucket<R> newestVictim; // guarded by lock
    private long victimBytes; // guarded by lock
    private volatile long accountedBytes; // written under lock; volatile so stats readers see a recent value
    private boolean closed; // guarded by lock
    private List<Bucket<R>> evictedForCommit; // guarded by lock: hands commitLocked's evictions to its caller
    private final LongAdder hits = new LongAdder(); // adders: pinning threads must not contend on a statistic
    private final LongAdder victimHits = new LongAdder(); // adders: pinning threads must not contend on a statistic
    private final LongAdder misses = new LongAdder(); // adders: pinning threads must not contend on a statistic
    private final LongAdder evictions = new LongAdder(); // adders: pinning threads must not contend on a statistic

    public FirehoseCache(Config config, Registrar<R> registrar) {
        this.config = config;
        this.registrar = registrar;
        this.bucketSize = config.bucketSize();
        this.shift = Integer.numberOfTrailingZeros(config.bucketSize());
        this.bound = config.boundBytes();
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
        Waiter me = new Waiter(lock.newCondition());
        lock.lock();
        try {
            waiters.addLast(me);
        } finally {
            lock.unlock();
        }
        try {
            while (true) {
                lock.lock();
                try {
                    while (waiters.peekFirst() != me || !me.signalled) {
                        long remaining = deadline - System.nanoTime();
                        if (remaining <= 0) {
                            throw new FirehoseException("no room to pin " + segment.byteSize() + " bytes at 0x"
                                    + Long.toHexString(segment.address()) + " within "
                                    + TimeUnit.NANOSECONDS.toMillis(config.pinTimeoutNanos()) + " ms: "
                                    + accountedBytes + " of " + bound + " bytes registered, " + victimBytes
                                    + " of them victims, " + (waiters.size() - 1) + " other waiters");
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
            lock.lock();
            try {
                waiters.remove(me);
                signalHead(); // the next waiter may fit in what is left
            } finally {
                lock.unlock();
            }
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
            dying = unref(handle.bucket(i), dying);
        }
        deregisterAll(dying);
    }

    /** Bytes registered or being registered or deregistered by this cache now (at most the bound). */
    public long registeredBytes() {
        return accountedBytes;
    }

    /** Bytes of victim buckets (registered, unreferenced). */
    public long victimBytes() {
        lock.lock();
        try {
            return victimBytes;
        } finally {
            lock.unlock();
        }
    }

    /** Victim bucket addresses, oldest first (for tests and diagnostics; takes the table lock). */
    public long[] victimAddresses() {
        lock.lock();
        try {
            ArrayList<Long> out = new ArrayList<>();
            for (Bucket<R> b = oldestVictim; b != null; b = b.newer) {
                out.add(b.address);
            }
            return out.stream().mapToLong(Long::longValue).toArray();
        } finally {
            lock.unlock();
        }
    }

    /** Pinners queued for room now (tests and diagnostics). */
    public int waitingPinners() {
        lock.lock();
        try {
            return waiters.size();
        } finally {
            lock.unlock();
        }
    }

    /** Buckets found registered (in use or victim) by a pin. */
    public long hits() {
        return hits.sum();
    }

    /** Of {@link #hits()}, the ones that took a bucket off the victim FIFO. */
    public long victimHits() {
        return victimHits.sum();
    }

    /** Buckets a pin had to register. */
    public long misses() {
        return misses.sum();
    }

    /** Victim buckets deregistered. */
    public long evictions() {
        return evictions.sum();
    }

    /** The reference count of the bucket holding {@code address}, or -1 if it is not registered (tests). */
    public int referenceCount(long address) {
        Bucket<R> b = table.get(address >>> shift);
        return b == null ? -1 : Math.max(-1, b.refs.get());
    }

    // ------------------------------------------------------------------ acquisition

    /**
     * One all-or-nothing attempt. {@code me} is null for a caller outside the queue (may take room only if nobody
     * waits) or the caller's queue entry (may take room only at the head).
     */
    private FirehoseHandle<R> attempt(MemorySegment segment, Waiter me, long deadline) {
        if (!segment.isNative() || segment.byteSize() <= 0) {
            throw new IllegalArgumentException("firehose pins non-empty native segments only, got " + segment);
        }
        long first = segment.address() >>> shift;
        long last = (segment.address() + segment.byteSize() - 1) >>> shift;
        int count = (int) (last - first + 1);
        if ((long) count * bucketSize > bound) {
            throw new IllegalArgumentException("segment of " + segment.byteSize() + " bytes spans " + count
                    + " buckets of " + bucketSize + ", more than the bound of " + bound + " bytes");
        }
        if (count == 1) { // the common lock-free hit, without the array
            Bucket<R> b = table.get(first);
            if (b != null && b.state == READY && refInUse(b)) {
                hits.increment();
                return new FirehoseHandle<>(this, segment, b);
            }
        }
        @SuppressWarnings("unchecked")
        Bucket<R>[] got = new Bucket[count];
        int have = 0;
        for (int i = 0; i < count; i++) { // lock-free hits on buckets in use
            Bucket<R> b = table.get(first + i);
            if (b != null && b.state == READY && refInUse(b)) {
                got[i] = b;
                have++;
            }
        }
        if (have == count) {
            hits.add(count);
            return new FirehoseHandle<>(this, segment, got);
        }
        List<Bucket<R>> dying = null;
        List<Bucket<R>> created = null;
        boolean noRoom = false;
        boolean wasClosed;
        lock.lock();
        try {
            wasClosed = closed;
            int missing = 0;
            long reusedVictimBytes = 0; // victims this pin takes back are not evictable for it
            for (int i = 0; i < count; i++) {
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
            boolean mayTakeRoom = me == null ? waiters.isEmpty() : waiters.peekFirst() == me;
            if (wasClosed || need > 0
                    && (!mayTakeRoom || accountedBytes - (victimBytes - reusedVictimBytes) + need > bound)) {
                dying = releaseLocked(got); // all or nothing: wait holding no references
                noRoom = true;
            } else {
                created = commitLocked(got, first, need, missing);
                dying = evictedForCommit;
                evictedForCommit = null;
                if (me != null) {
                    waiters.remove(me);
                    signalHead(); // the next waiter may fit too
                }
            }
        } finally {
            lock.unlock();
        }
        if (noRoom) {
            deregisterAll(dying);
            if (wasClosed) {
                throw new FirehoseException("pin of " + segment.byteSize() + " bytes on a closed firehose cache");
            }
            return null;
        }
        try {
            deregisterEvicted(dying, created);
            registerAll(created);
            awaitReady(got, deadline);
        } catch (RuntimeException e) {
            releaseQuietly(got);
            throw e;
        }
        return new FirehoseHandle<>(this, segment, got);
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
                    unlinkVictim(b);
                    b.refs.set(1);
                    victimHits.increment();
                } else {
                    b.refs.incrementAndGet(); // >= 1: in use or REGISTERING; cannot reach 0 without the lock
                }
                got[i] = b;
                hitCount++;
            }
        }
        long evictedBytes = 0;
        List<Bucket<R>> dying = null;
        while (accountedBytes - evictedBytes + need > bound) { // room: the oldest victims go first
            Bucket<R> victim = oldestVictim;
            unlinkVictim(victim);
            victim.refs.set(-1); // dead: no pin can take it (counts move 0 -> 1 only under this lock)
            table.remove(victim);
            dying = add(dying, victim);
            evictedBytes += bucketSize;
        }
        List<Bucket<R>> created = null;
        for (int i = 0; i < got.length; i++) {
            if (got[i] == null) {
                Bucket<R> b = new Bucket<>(first + i, (first + i) << shift, 1);
                table.put(b);
                got[i] = b;
                created = add(created, b);
            }
        }
        // The evicted bytes become this pin's; they are deregistered before anything is registered.
        accountedBytes = accountedBytes - evictedBytes + need;
        hits.add(hitCount);
        misses.add(missing);
        evictedForCommit = dying;
        return created;
    }

    /** Compare-and-set increment of a count that is already {@code >= 1}; false if it is 0 (victim) or dead. */
    private static boolean refInUse(Bucket<?> b) {
        while (true) {
            int r = b.refs.get();
            if (r < 1) {
                return false;
            }
            if (b.refs.compareAndSet(r, r + 1)) {
                return true;
            }
        }
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
                evictions.increment();
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
                    b.state = FAILED; // volatile: publishes failure
                    table.remove(b);
                }
                accountedBytes = accountedBytes - (long) created.size() * bucketSize + leaked;
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
                    b.state = READY; // volatile: publishes b.registration to lock-free hits
                } else {
                    b.failure = failure;
                    b.state = FAILED; // volatile: publishes b.failure
                    table.remove(b);
                    accountedBytes -= bucketSize;
                    signalHead();
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
            if (b.state == READY) {
                continue;
            }
            lock.lock();
            try {
                while (b.state == REGISTERING) {
                    long remaining = deadline - System.nanoTime();
                    if (remaining <= 0) {
                        throw new FirehoseException("firehose bucket 0x" + Long.toHexString(b.address)
                                + " still registering by another thread after "
                                + TimeUnit.NANOSECONDS.toMillis(config.pinTimeoutNanos()) + " ms");
                    }
                    settled.awaitNanos(remaining);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new FirehoseException("interrupted while waiting for bucket 0x" + Long.toHexString(b.address));
            } finally {
                lock.unlock();
            }
            if (b.state == FAILED) {
                throw new FirehoseException("firehose bucket 0x" + Long.toHexString(b.address)
                        + " could not be registered: " + b.failure.getMessage(), b.failure);
            }
        }
    }

    // ------------------------------------------------------------------ release

    /** Drops one reference; returns the list of buckets the caller must deregister (victim FIFO overflow). */
    private List<Bucket<R>> unref(Bucket<R> b, List<Bucket<R>> dying) {
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

    /** Under the lock, with the count just set to 0: the bucket joins the victim FIFO, overflow is evicted. */
    private List<Bucket<R>> becameUnreferenced(Bucket<R> b, List<Bucket<R>> dying) {
        if (b.state != READY) {
            return dying; // failed registration: its room was already given back
        }
        if (closed) {
            b.refs.set(-1);
            table.remove(b);
            return add(dying, b);
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
        while (victimBytes > config.maxVictimBytes()) {
            Bucket<R> victim = oldestVictim;
            unlinkVictim(victim);
            victim.refs.set(-1);
            table.remove(victim);
            dying = add(dying, victim);
        }
        signalHead(); // a victim is room for a waiting miss
        return dying;
    }

    /** Deregisters dead buckets outside the lock, then gives their bytes back. */
    private void deregisterAll(List<Bucket<R>> dying) {
        if (dying == null) {
            return;
        }
        long freed = 0;
        RuntimeException failure = null;
        for (Bucket<R> b : dying) {
            try {
                registrar.deregister(b.registration);
                evictions.increment();
                freed += bucketSize;
            } catch (RuntimeException e) {
                failure = failure == null ? e : failure; // those bytes stay accounted: they stay registered
            }
        }
        lock.lock();
        try {
            accountedBytes -= freed;
            signalHead();
        } finally {
            lock.unlock();
        }
        if (failure != null) {
            throw new FirehoseException("deregistering a firehose victim failed: " + failure.getMessage(), failure);
        }
    }

    /** Under the lock: gives back the references a failed attempt took; returns victims to deregister. */
    private List<Bucket<R>> releaseLocked(Bucket<R>[] got) {
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

    private void releaseQuietly(Bucket<R>[] got) {
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

    // ------------------------------------------------------------------ helpers (under the lock)

    private void unlinkVictim(Bucket<R> b) {
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

    private void signalHead() {
        Waiter head = waiters.peekFirst();
        if (head != null) {
            head.signalled = true;
            head.wakeup.signal();
        }
    }

    private static <T> List<T> add(List<T> list, T item) {
        List<T> out = list == null ? new ArrayList<>(2) : list;
        out.add(item);
        return out;
    }

    /**
     * Deregisters every unreferenced bucket now and every bucket in use when its last pin is released; later pins
     * that need the table lock (misses, victim hits) fail, lock-free hits on buckets still in use succeed until those
     * are released. Idempotent.
     */
    @Override
    public void close() {
        List<Bucket<R>> dying = null;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            while (oldestVictim != null) {
                Bucket<R> victim = oldestVictim;
                unlinkVictim(victim);
                victim.refs.set(-1);
                table.remove(victim);
                dying = add(dying, victim);
            }
            for (Waiter w : waiters) {
                w.signalled = true;
                w.wakeup.signal();
            }
        } finally {
            lock.unlock();
        }
        deregisterAll(dying);
    }

    @Override
    public String toString() {
        return "FirehoseCache[bucket=" + bucketSize + ", registered=" + accountedBytes + "/" + bound + ", hits="
                + hits.sum() + ", misses=" + misses.sum() + ", evictions=" + evictions.sum() + "]";
    }
}
