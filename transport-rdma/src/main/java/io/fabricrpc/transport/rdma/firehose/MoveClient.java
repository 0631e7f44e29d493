package io.fabricrpc.transport.rdma.firehose;

import io.fabricrpc.transport.Link;
import io.fabricrpc.api.RemoteRegion;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static io.fabricrpc.transport.rdma.firehose.FirehoseMessages.*;

/**
 * The requester end of the {@link FirehoseMessages} move call for {@link RemoteFirehoses}: one round trip per move,
 * repeated while the peer answers {@code BUSY}, bounded by the caller's deadline. A requesting thread registers a
 * pending reply under a fresh id and spins for it; the polling thread completes it in {@link #onMessage} and its
 * volatile store of {@code status} publishes the decoded region. The pending map is shared by both (concurrent map).
 */
final class MoveClient {
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;

    private static final class Pending {
        volatile int status = -1; // written last by onMessage: publishes region
        RemoteRegion region;
        /** Why the reply could not be decoded (then status is STATUS_MALFORMED_REPLY). */
        String malformed;
    }

    private final int bucketSize;
    private final int shift;
    private final long timeoutNanos;
    private final ConcurrentHashMap<Long, Pending> pending = new ConcurrentHashMap<>();
    private final AtomicLong requestIds = new AtomicLong();
    private final AtomicLong busyRetries = new AtomicLong();

    MoveClient(int bucketSize, long timeoutNanos) {
        this.bucketSize = bucketSize;
        this.shift = Integer.numberOfTrailingZeros(bucketSize);
        this.timeoutNanos = timeoutNanos;
    }

    /** Move requests repeated because the peer's cache was at its bound. */
    long busyRetries() {
        return busyRetries.get();
    }

    /** Passes a {@link FirehoseMessages#MOVE_REPLY} to its waiting requester; other types return false. */
    boolean onMessage(Link from, int type, MemorySegment payload) {
        if (type != MOVE_REPLY || payload.byteSize() < REPLY_LENGTH) {
            return false;
        }
        Pending p = pending.remove(payload.get(LONG, REP_ID_OFFSET));
        if (p == null) {
            return true; // its requester gave up (timeout); it already freed the slot
        }
        int status = payload.get(INT, REP_STATUS_OFFSET);
        if (status < 0) { // the requester waits while status < 0: it must not take this as "no reply yet"
            p.malformed = "status " + status;
            status = STATUS_MALFORMED_REPLY;
        } else if (status == STATUS_OK) {
            try {
                p.region = RemoteRegion.decode(payload, REP_REGION_OFFSET);
            } catch (IllegalArgumentException e) {
                p.malformed = e.getMessage();
                status = STATUS_MALFORMED_REPLY;
            }
        }
        p.status = status; // volatile: publishes region to the requester
        return true;
    }

    /** One move round trip, repeated while the peer is busy; returns the new region. */
    RemoteRegion move(Link peer, int firehose, long bucket, long oldBucket, long deadline) {
        MemorySegment request = MemorySegment.ofArray(new byte[REQUEST_LENGTH]);
        IdleStrategy idle = new BackoffIdleStrategy(10, 10, 1_000, 1_000_000);
        long old = oldBucket == -1 ? -1 : oldBucket << shift;
        while (true) {
            long id = requestIds.incrementAndGet();
            Pending p = new Pending();
            pending.put(id, p);
            request.set(LONG, REQ_ID_OFFSET, id);
            request.set(LONG, REQ_NEW_OFFSET, bucket << shift);
            request.set(LONG, REQ_OLD_OFFSET, old);
            request.set(INT, REQ_BUCKET_SIZE_OFFSET, bucketSize);
            request.set(INT, REQ_FIREHOSE_OFFSET, firehose);
            try {
                idle.reset();
                while (!peer.send(MOVE_REQUEST, request, 0, REQUEST_LENGTH)) {
                    checkDeadline(peer, deadline, bucket, "sending the move request");
                    idle.idle();
                }
                idle.reset();
                while (p.status < 0) {
                    checkDeadline(peer, deadline, bucket, "the move reply");
                    idle.idle();
                }
            } finally {
                pending.remove(id);
            }
            old = -1; // the peer released it on receipt, whatever it answered
            if (p.status == STATUS_OK) {
                return p.region;
            }
            if (p.status != STATUS_BUSY) {
                throw new FirehoseException("endpoint " + Long.toHexString(peer.peerId()) + " refused to map bucket "
                        + bucket + " (offset " + (bucket << shift) + "): " + statusName(p.status)
                        + (p.malformed != null ? ": " + p.malformed : ""));
            }
            busyRetries.incrementAndGet();
            checkDeadline(peer, deadline, bucket, "room in the peer's cache");
            idle.idle();
        }
    }

    private void checkDeadline(Link peer, long deadline, long bucket, String what) {
        peer.checkAlive();
        if (System.nanoTime() - deadline > 0) {
            throw new FirehoseException("firehose move to bucket " + bucket + " (offset " + (bucket << shift)
                    + ") of endpoint " + Long.toHexString(peer.peerId()) + " timed out after "
                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms waiting for " + what);
        }
    }
}
