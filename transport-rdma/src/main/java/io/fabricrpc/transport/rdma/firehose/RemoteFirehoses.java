package io.fabricrpc.transport.rdma.firehose;

import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;
import org.agrona.collections.Long2ObjectHashMap;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Remote firehoses (Firehose §3.1): per peer, at most {@code F} mappings, each a bucket of the peer's exposed segment
 * that the peer keeps pinned for this process's writes (served by a {@link FirehoseServer} there). A put to a bucket
 * that is mapped is purely one-sided (a <em>hit</em>); on a <em>miss</em> the least recently used unreferenced mapping
 * is moved to the new bucket with one {@link FirehoseMessages#MOVE_REQUEST} round trip (or a never used one is
 * placed). Remote addresses are offsets into the peer's exposed segment.
 *
 * <p>Concurrency (Firehose-SMP §4): one short lock per peer guards that peer's mappings, never held across the round
 * trip: a moving mapping is marked {@code MOVING} and threads wanting the same bucket wait for it (the paper's
 * PENDING). A thread holds at most the one mapping it asks for in {@link #put}, which it releases after its write
 * completed, so a mapping's count is 0 only when no write through it is in flight, and no thread waits for a
 * mapping while holding one: no deadlock. Misses that find all {@code F} mappings in use queue in FIFO order per
 * peer. Every wait ends by its deadline with a {@link FirehoseException}.
 *
 * <p>Replies arrive through {@link io.fabricrpc.transport.Transport#pollMessages}: the process's polling thread must pass
 * {@link FirehoseMessages#MOVE_REPLY} messages to {@link #onMessage}. Thread-safe. This class keeps the mappings;
 * the move round trip and its pending replies are {@link MoveClient}'s.
 */
public final class RemoteFirehoses {
    private static final int FREE = 0;
    private static final int MOVING = 1;
    private static final int MAPPED = 2;

    /** A mapping: valid for writes into {@link #region()} from {@link #acquire} until {@link #release}. */
    public static final class Mapping {
        private final PeerHoses owner;
        private final int index; // its firehose number at the peer
        private long bucket = -1; // the rest guarded by owner.lock
        private int state = FREE;
        private int refs;
        private long lastUse;
        private volatile RemoteRegion region; // volatile: set under the lock, read by the acquirer without it

        Mapping(PeerHoses owner, int index) {
            this.owner = owner;
            this.index = index;
        }

        /** The peer's registration of the bucket (address, rkey, one bucket long). */
        public RemoteRegion region() {
            return region;
        }

        /** Offset of the bucket in the peer's exposed segment. */
        public long bucketOffset() {
            return bucket * owner.bucketSize;
        }
    }

    /** One peer's mappings. */
    private final class PeerHoses {
        final long peerId;
        final long bucketSize;
        final ReentrantLock lock = new ReentrantLock();
        final Condition changed = lock.newCondition();
        final Mapping[] slots;
        final Long2ObjectHashMap<Mapping> byBucket = new Long2ObjectHashMap<>();
        final ArrayDeque<Object> missQueue = new ArrayDeque<>();
        long clock;

        PeerHoses(long peerId) {
            this.peerId = peerId;
            this.bucketSize = RemoteFirehoses.this.bucketSize;
            this.slots = new Mapping[firehosesPerPeer];
            for (int i = 0; i < slots.length; i++) {
                slots[i] = new Mapping(this, i);
            }
        }
    }

    private final int firehosesPerPeer;
    private final int bucketSize;
    private final int shift;
    private final long timeoutNanos;
    private volatile Long2ObjectHashMap<PeerHoses> peers = new Long2ObjectHashMap<>(); // copy on write
    private final MoveClient mover;
    private final AtomicLong hits = new AtomicLong();
    private final AtomicLong misses = new AtomicLong();
    private final AtomicLong moves = new AtomicLong();

    /**
     * @param firehosesPerPeer F
     * @param bucketSize       the peers' firehose bucket size (a peer answers a mismatch with an error)
     * @param timeoutNanos     bound of every wait: for a mapping, for a reply, for a busy peer
     */
    public RemoteFirehoses(int firehosesPerPeer, int bucketSize, long timeoutNanos) {
        if (firehosesPerPeer < 1 || bucketSize < 4096 || Integer.bitCount(bucketSize) != 1 || timeoutNanos <= 0) {
            throw new IllegalArgumentException("remote firehoses need F >= 1, a power-of-two bucket size >= 4096 and a "
                    + "positive timeout; got " + firehosesPerPeer + ", " + bucketSize + ", " + timeoutNanos);
        }
        this.firehosesPerPeer = firehosesPerPeer;
        this.bucketSize = bucketSize;
        this.shift = Integer.numberOfTrailingZeros(bucketSize);
        this.timeoutNanos = timeoutNanos;
        this.mover = new MoveClient(bucketSize, timeoutNanos);
    }

    public int bucketSize() {
        return bucketSize;
    }

    /** Mapped buckets found by {@link #acquire}. */
    public long hits() {
        return hits.get();
    }

    /** Buckets {@link #acquire} had to map (placing or moving a firehose). */
    public long misses() {
        return misses.get();
    }

    /** Of {@link #misses()}, those that moved a mapping away from another bucket. */
    public long moves() {
        return moves.get();
    }

    /** Move requests repeated because the peer's cache was at its bound. */
    public long busyRetries() {
        return mover.busyRetries();
    }

    /**
     * Writes {@code length} bytes of a pinned segment to the peer's exposed segment at {@code remoteOffset}: per
     * remote bucket the range touches, acquire its mapping, write, wait for completion, release.
     *
     * @throws FirehoseException if a mapping cannot be obtained in time or the peer refuses it
     */
    public void put(Link peer, FirehoseHandle<LocalRegion> src, long srcOffset, long remoteOffset, long length) {
        put(peer, src, null, srcOffset, remoteOffset, length);
    }

    /** {@link #put} from a registered region. */
    public void put(Link peer, LocalRegion src, long srcOffset, long remoteOffset, long length) {
        put(peer, null, src, srcOffset, remoteOffset, length);
    }

    /** From {@code pinned} if not null, else from {@code region}. */
    private void put(Link peer, FirehoseHandle<LocalRegion> pinned, LocalRegion region, long srcOffset,
                     long remoteOffset, long length) {
        long done = 0;
        while (done < length) {
            long at = remoteOffset + done;
            long chunk = Math.min(length - done, bucketSize - (at & (bucketSize - 1)));
            Mapping m = acquire(peer, at, chunk);
            try {
                long to = at - m.bucketOffset();
                long ticket = pinned != null ? RdmaFirehose.write(peer, pinned, srcOffset + done, m.region(), to, chunk)
                        : peer.write(region, srcOffset + done, m.region(), to, chunk);
                peer.awaitCompletion(ticket); // the mapping may move once no write through it is in flight
            } finally {
                release(m);
            }
            done += chunk;
        }
    }

    /**
     * A mapping covering {@code [remoteOffset, remoteOffset + length)} of the peer's exposed segment (one bucket),
     * referenced until {@link #release}.
     *
     * @throws IllegalArgumentException if the range is empty, negative or crosses a bucket boundary
     * @throws FirehoseException        on timeout, peer refusal or peer failure
     */
    public Mapping acquire(Link peer, long remoteOffset, long length) {
        if (remoteOffset < 0 || length <= 0 || (remoteOffset >>> shift) != ((remoteOffset + length - 1) >>> shift)) {
            throw new IllegalArgumentException("a firehose mapping covers one bucket of " + bucketSize
                    + " bytes; range offset " + remoteOffset + " length " + length + " does not fit one");
        }
        long bucket = remoteOffset >>> shift;
        PeerHoses hoses = hosesOf(peer.peerId());
        long deadline = System.nanoTime() + timeoutNanos;
        Mapping slot;
        long oldBucket;
        Object me = null;
        hoses.lock.lock();
        try {
            while (true) {
                Mapping m = hoses.byBucket.get(bucket);
                if (m != null) {
                    if (m.state == MAPPED) {
                        m.refs++;
                        m.lastUse = ++hoses.clock;
                        hits.incrementAndGet();
                        return m;
                    }
                    awaitChange(hoses, peer, deadline, "bucket " + bucket + " being mapped by another thread");
                    continue;
                }
                boolean myTurn = me == null ? hoses.missQueue.isEmpty() : hoses.missQueue.peekFirst() == me;
                slot = myTurn ? victim(hoses) : null;
                if (slot != null) {
                    break;
                }
                if (me == null) {
                    me = new Object();
                    hoses.missQueue.addLast(me);
                }
                awaitChange(hoses, peer, deadline, "a free firehose (all " + firehosesPerPeer + " in use)");
            }
            oldBucket = slot.bucket;
            if (oldBucket != -1) {
                hoses.byBucket.remove(oldBucket);
                moves.incrementAndGet();
            }
            slot.bucket = bucket;
            slot.state = MOVING;
            slot.refs = 1;
            slot.region = null;
            hoses.byBucket.put(bucket, slot);
            misses.incrementAndGet();
        } finally {
            if (me != null) {
                hoses.missQueue.remove(me);
                hoses.changed.signalAll(); // the next queued miss may go
            }
            hoses.lock.unlock();
        }
        RemoteRegion region = null;
        try {
            region = mover.move(peer, slot.index, bucket, oldBucket, deadline);
        } finally {
            hoses.lock.lock();
            try {
                if (region != null) {
                    slot.region = region;
                    slot.state = MAPPED;
                    slot.lastUse = ++hoses.clock;
                } else { // both ends now agree the slot maps nothing (the peer released the old bucket first)
                    hoses.byBucket.remove(bucket);
                    slot.bucket = -1;
                    slot.state = FREE;
                    slot.refs = 0;
                }
                hoses.changed.signalAll();
            } finally {
                hoses.lock.unlock();
            }
        }
        return slot;
    }

    /** Drops a reference taken by {@link #acquire}; call only after every write through it completed. */
    public void release(Mapping mapping) {
        PeerHoses hoses = mapping.owner;
        hoses.lock.lock();
        try {
            if (mapping.refs <= 0 || mapping.state != MAPPED) {
                throw new IllegalArgumentException("release of a firehose mapping that is not referenced (bucket "
                        + mapping.bucket + ", references " + mapping.refs + ")");
            }
            if (--mapping.refs == 0) {
                hoses.changed.signalAll(); // it can be moved now
            }
        } finally {
            hoses.lock.unlock();
        }
    }

    /** Mappings to {@code peerId} now (tests, diagnostics). */
    public int mappedCount(long peerId) {
        PeerHoses hoses = peers.get(peerId);
        if (hoses == null) {
            return 0;
        }
        hoses.lock.lock();
        try {
            return hoses.byBucket.size();
        } finally {
            hoses.lock.unlock();
        }
    }

    /** Passes a {@link FirehoseMessages#MOVE_REPLY} to its waiting requester; other types return false. */
    public boolean onMessage(Link from, int type, MemorySegment payload) {
        return mover.onMessage(from, type, payload);
    }

    /** Free slot first, else the least recently used unreferenced mapping; null if all are in use or moving. */
    private Mapping victim(PeerHoses hoses) {
        Mapping best = null;
        for (Mapping m : hoses.slots) {
            if (m.state == FREE) {
                return m;
            }
            if (m.state == MAPPED && m.refs == 0 && (best == null || m.lastUse < best.lastUse)) {
                best = m;
            }
        }
        return best;
    }

    private void awaitChange(PeerHoses hoses, Link peer, long deadline, String what) {
        long remaining = deadline - System.nanoTime();
        if (remaining <= 0) {
            throw new FirehoseException("no firehose to endpoint " + Long.toHexString(hoses.peerId) + " within "
                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms: waited for " + what);
        }
        peer.checkAlive();
        try {
            hoses.changed.awaitNanos(Math.min(remaining, TimeUnit.MILLISECONDS.toNanos(10))); // re-check liveness
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FirehoseException("interrupted while waiting for " + what);
        }
    }

    private PeerHoses hosesOf(long peerId) {
        PeerHoses hoses = peers.get(peerId);
        if (hoses != null) {
            return hoses;
        }
        synchronized (this) {
            hoses = peers.get(peerId);
            if (hoses == null) {
                Long2ObjectHashMap<PeerHoses> copy = new Long2ObjectHashMap<>(peers);
                hoses = new PeerHoses(peerId);
                copy.put(peerId, hoses);
                peers = copy; // volatile: readers see the complete map
            }
            return hoses;
        }
    }
}
