package io.fabricrpc.transport.rdma.firehose;

import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;
import org.agrona.collections.Long2ObjectHashMap;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;

import static io.fabricrpc.transport.rdma.firehose.FirehoseMessages.*;

/**
 * The peer end of remote firehoses: serves {@link FirehoseMessages#MOVE_REQUEST}s for an exposed segment of this
 * process (the memory peers may write into through firehoses), pinning the requested bucket in a
 * {@link FirehoseCache} whose buckets grant peers write access, and releasing the bucket the requester's mapping
 * held before. The old bucket is released first, whatever the outcome for the new one, so both ends agree that the
 * requester's mapping is gone unless the reply says {@code OK}. Each requester may hold at most
 * {@code maxMappingsPerPeer} buckets (its {@code F}); the cache's bound covers all requesters.
 *
 * <p>Call {@link #onMessage} from the one thread that polls the transport (a message handler must not block: a pin
 * that finds no room answers {@code BUSY} and the requester retries). {@link #releasePeer} and {@link #close} may
 * be called from other threads.
 */
public final class FirehoseServer implements AutoCloseable {
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;

    private final MemorySegment exposed;
    private final FirehoseCache<LocalRegion> cache;
    private final int bucketSize;
    private final int maxMappingsPerPeer;
    private final long replyTimeoutNanos;
    private final Long2ObjectHashMap<Long2ObjectHashMap<FirehoseHandle<LocalRegion>>> held = new Long2ObjectHashMap<>(); // guarded by this
    private final MemorySegment reply = MemorySegment.ofArray(new byte[REPLY_LENGTH]); // poller thread only

    /**
     * @param exposed            bucket-aligned native memory, a whole number of buckets, that peers may write into
     * @param cache              a cache whose registrar grants peers write access (see
     *                           {@link RdmaFirehose#registrar}); owned by the caller
     * @param maxMappingsPerPeer F: buckets one requester may hold pinned here
     */
    public FirehoseServer(MemorySegment exposed, FirehoseCache<LocalRegion> cache, int maxMappingsPerPeer) {
        this.bucketSize = cache.config().bucketSize();
        if (!exposed.isNative() || exposed.address() % bucketSize != 0 || exposed.byteSize() % bucketSize != 0
                || exposed.byteSize() == 0) {
            throw new IllegalArgumentException("the exposed segment must be native, " + bucketSize
                    + "-byte aligned and a non-zero multiple of it; got " + exposed);
        }
        if (maxMappingsPerPeer < 1) {
            throw new IllegalArgumentException("maxMappingsPerPeer must be >= 1, got " + maxMappingsPerPeer);
        }
        this.exposed = exposed;
        this.cache = cache;
        this.maxMappingsPerPeer = maxMappingsPerPeer;
        this.replyTimeoutNanos = TimeUnit.SECONDS.toNanos(5);
    }

    /** Handles a {@link FirehoseMessages#MOVE_REQUEST}; other types are ignored (returns false). */
    public boolean onMessage(Link from, int type, MemorySegment payload) {
        if (type != MOVE_REQUEST) {
            return false;
        }
        long id = payload.byteSize() >= 8 ? payload.get(LONG, REQ_ID_OFFSET) : 0;
        RemoteRegion region = null;
        int status;
        if (payload.byteSize() < REQUEST_LENGTH) {
            status = STATUS_MALFORMED;
        } else {
            long newOffset = payload.get(LONG, REQ_NEW_OFFSET);
            long oldOffset = payload.get(LONG, REQ_OLD_OFFSET);
            int requestedBucket = payload.get(INT, REQ_BUCKET_SIZE_OFFSET);
            int firehose = payload.get(INT, REQ_FIREHOSE_OFFSET);
            FirehoseHandle<LocalRegion> pinned = null;
            synchronized (this) {
                // Pins are kept per (requester, firehose): requests of different firehoses may arrive in any order.
                Long2ObjectHashMap<FirehoseHandle<LocalRegion>> mine = held.get(from.peerId());
                if (mine == null) {
                    mine = new Long2ObjectHashMap<>();
                    held.put(from.peerId(), mine);
                }
                status = STATUS_OK;
                FirehoseHandle<LocalRegion> current = mine.get(firehose);
                long currentOffset = current == null ? -1 : current.segment().address() - exposed.address();
                if (firehose < 0 || firehose >= maxMappingsPerPeer) {
                    status = STATUS_TOO_MANY;
                } else if (current != null && currentOffset == newOffset) {
                    pinned = current; // a repeated request: same answer
                } else if (oldOffset != -1 && currentOffset != oldOffset) {
                    status = STATUS_NOT_HELD;
                } else {
                    if (current != null) {
                        // The old bucket (or, if the requester says none, a pin it gave up on after a timeout): the
                        // requester has no write in flight through it (refcount 0 there).
                        mine.remove(firehose);
                        cache.release(current);
                    }
                    if (requestedBucket != bucketSize) {
                        status = STATUS_BAD_BUCKET_SIZE;
                    } else if (newOffset < 0 || newOffset % bucketSize != 0 || newOffset > exposed.byteSize() - bucketSize) {
                        status = STATUS_OUT_OF_RANGE;
                    } else {
                        try {
                            pinned = cache.tryPin(exposed.asSlice(newOffset, bucketSize));
                            if (pinned == null) {
                                status = STATUS_BUSY;
                            } else {
                                mine.put(firehose, pinned);
                            }
                        } catch (FirehoseException e) {
                            status = STATUS_FAILED;
                        }
                    }
                }
            }
            if (pinned != null) {
                region = pinned.registration(0).remote();
            }
        }
        reply.fill((byte) 0);
        reply.set(LONG, REP_ID_OFFSET, id);
        reply.set(INT, REP_STATUS_OFFSET, status);
        if (region != null) {
            region.encode(reply, REP_REGION_OFFSET);
        }
        long deadline = System.nanoTime() + replyTimeoutNanos;
        while (!from.send(MOVE_REPLY, reply, 0, REPLY_LENGTH)) { // the requester's queue is full: it is polling
            from.checkAlive();
            if (System.nanoTime() - deadline > 0) {
                throw new FirehoseException("cannot reply to firehose move request " + id + " of endpoint "
                        + Long.toHexString(from.peerId()) + " within 5 s: its message queue stays full");
            }
            Thread.onSpinWait();
        }
        return true;
    }

    /** Buckets {@code peerId} holds pinned here (tests, diagnostics). */
    public synchronized int mappingsOf(long peerId) {
        Long2ObjectHashMap<FirehoseHandle<LocalRegion>> mine = held.get(peerId);
        return mine == null ? 0 : mine.size();
    }

    /** Releases every bucket {@code peerId} holds (call when the peer failed or left). */
    public synchronized void releasePeer(long peerId) {
        Long2ObjectHashMap<FirehoseHandle<LocalRegion>> mine = held.remove(peerId);
        if (mine != null) {
            mine.values().forEach(cache::release);
        }
    }

    /** Releases every mapping of every peer; the cache stays open (its owner closes it). */
    @Override
    public synchronized void close() {
        held.values().forEach(mine -> mine.values().forEach(cache::release));
        held.clear();
    }
}
