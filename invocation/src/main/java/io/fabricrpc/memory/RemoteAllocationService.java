package io.fabricrpc.memory;

import io.fabricrpc.api.RemoteAllocationException;

import io.fabricrpc.api.MessagingException;
import io.fabricrpc.messaging.ServiceDispatcher;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.transport.Transport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import static io.fabricrpc.memory.RemoteAllocationMessages.*;

/**
 * Remote memory allocation as a no-setup service call (Seriema §3/§4.2): a process asks a peer's service thread to
 * allocate memory in the peer and gets back a {@link RemoteRegion} for one-sided writes and reads. Both ends register
 * this service on their {@link ServiceDispatcher}; the peer answers from its service thread, so none of its worker
 * threads takes part.
 *
 * <p>The owner grants at most {@code limitBytes} in total (over every requester) and refuses beyond that; only the
 * requester that got a region may free it. Regions granted to a peer that dies stay allocated until
 * {@link #close()} (the owner does not track requesters' liveness).
 *
 * <p>Thread-safe; requests block the caller until the reply, bounded by the timeout and the peer's liveness.
 */
public final class RemoteAllocationService implements AutoCloseable {
    /** Configuration key of the limit (bytes granted to peers in total). */
    public static final String LIMIT_KEY = "memory.remoteAllocationLimitBytes";
    public static final long DEFAULT_LIMIT_BYTES = 1L << 30;

    /** Allocates the memory of a grant (e.g. {@link Transport#allocate}, or a fabric's allocate that also files it). */
    @FunctionalInterface
    public interface RegionSource {
        LocalRegion allocate(long bytes, RemoteAccess access);
    }

    private record Grant(LocalRegion region, long requester, long bytes) {
    }

    private final ServiceDispatcher service;
    private final long limitBytes;
    private final RegionSource source;
    private final Consumer<LocalRegion> release;
    private final ConcurrentHashMap<Long, Grant> grants = new ConcurrentHashMap<>();
    /** Changed only on the service thread; read by anyone. */
    private volatile long grantedBytes;

    /** A service whose grants come straight from the dispatcher's transport and are closed on free. */
    public RemoteAllocationService(ServiceDispatcher service, long limitBytes) {
        this(service, limitBytes, service.transport()::allocate, LocalRegion::close);
    }

    /**
     * @param source  allocates granted memory (called on the service thread)
     * @param release gives back a granted region that was freed (called on the service thread, or in {@link #close})
     */
    public RemoteAllocationService(ServiceDispatcher service, long limitBytes, RegionSource source,
                                   Consumer<LocalRegion> release) {
        if (limitBytes < 0) {
            throw new IllegalArgumentException(LIMIT_KEY + " must be >= 0, got " + limitBytes);
        }
        this.service = service;
        this.limitBytes = limitBytes;
        this.source = source;
        this.release = release;
        service.register(ALLOCATE_REQUEST, this::serveAllocate);
        service.register(FREE_REQUEST, this::serveFree);
        service.register(ALLOCATE_REPLY, this::onReply);
        service.register(FREE_REPLY, this::onReply);
    }

    /** Parses {@value #LIMIT_KEY} from a configuration map ({@value #DEFAULT_LIMIT_BYTES} when absent). */
    public static long limitFrom(java.util.Map<String, String> config) {
        String value = config.get(LIMIT_KEY);
        if (value == null || value.isBlank()) {
            return DEFAULT_LIMIT_BYTES;
        }
        try {
            long limit = Long.parseLong(value.trim());
            if (limit < 0) {
                throw new NumberFormatException("negative");
            }
            return limit;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(LIMIT_KEY + " must be a byte count >= 0, got '" + value + "'");
        }
    }

    /** Bytes this process has granted to peers and not yet got back. */
    public long grantedBytes() {
        return grantedBytes;
    }

    public long limitBytes() {
        return limitBytes;
    }

    /** The local region behind a handle this process granted, or null. */
    public LocalRegion granted(RemoteRegion handle) {
        Grant grant = grants.get(handle.regionId());
        return grant == null || !grant.region().remote().equals(handle) ? null : grant.region();
    }

    // ----------------------------------------------------------------------------------------------- requesting

    /**
     * Allocates {@code bytes} in the peer at the other end of {@code peer}, which peers may access as {@code access}
     * allows.
     *
     * @throws IllegalArgumentException   if {@code bytes} is not positive or {@code access} is {@link RemoteAccess#NONE}
     * @throws RemoteAllocationException  if the peer refuses (over its limit, allocation failed)
     * @throws io.fabricrpc.api.PeerFailedException if the peer fails before answering
     * @throws io.fabricrpc.api.MessagingException  if no answer comes within {@code timeout}
     */
    public RemoteRegion allocate(Link peer, long bytes, RemoteAccess access, Duration timeout) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("remote allocation size must be positive, got " + bytes);
        }
        if (access == RemoteAccess.NONE) {
            throw new IllegalArgumentException("a remote allocation needs WRITE, READ or READ_WRITE access, got NONE");
        }
        String what = "remote allocation of " + bytes + " bytes (" + access + ")";
        MemorySegment reply = call(peer, ALLOCATE_REQUEST, ALLOCATE_REQUEST_LENGTH, timeout, what, (request, id) -> {
            request.set(ValueLayout.JAVA_LONG_UNALIGNED, ALLOC_BYTES, bytes);
            request.set(ValueLayout.JAVA_INT_UNALIGNED, ALLOC_ACCESS, access.ordinal());
        });
        try {
            return RemoteRegion.decode(reply, REPLY_REGION);
        } catch (IllegalArgumentException e) {
            throw new RemoteAllocationException(what + ": malformed reply from endpoint "
                    + Long.toHexString(peer.peerId()) + ": " + e.getMessage());
        }
    }

    /**
     * Frees a region this process got from {@link #allocate} on the same peer.
     *
     * @throws RemoteAllocationException if the peer does not know the region as granted to this process
     * @throws io.fabricrpc.api.PeerFailedException if the peer fails before answering
     */
    public void free(Link peer, RemoteRegion region, Duration timeout) {
        call(peer, FREE_REQUEST, FREE_REQUEST_LENGTH, timeout, "free of " + region,
                (request, id) -> region.encode(request, FREE_REGION));
    }

    private interface Filler {
        void fill(MemorySegment request, long requestId);
    }

    private MemorySegment call(Link peer, int type, int length, Duration timeout, String what, Filler filler) {
        long requestId = service.newRequest();
        long deadline = System.nanoTime() + timeout.toNanos();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment request = arena.allocate(length, 8);
            request.set(ValueLayout.JAVA_LONG_UNALIGNED, REQUEST_ID, requestId);
            filler.fill(request, requestId);
            while (!peer.send(type, request, 0, length)) {
                peer.checkAlive();
                if (System.nanoTime() - deadline > 0) {
                    try {
                        service.await(requestId, peer, 0, what); // only to drop the pending entry
                    } catch (RuntimeException expected) {
                        // no reply can come: the request was never sent
                    }
                    throw new MessagingException("the service queue of endpoint " + Long.toHexString(peer.peerId())
                            + " stayed full for " + timeout.toMillis() + " ms: " + what + " not sent");
                }
                LockSupport.parkNanos(10_000);
            }
        }
        MemorySegment reply = MemorySegment.ofArray(service.await(requestId, peer,
                Math.max(0, deadline - System.nanoTime()), what));
        if (reply.byteSize() != REPLY_LENGTH) {
            throw new RemoteAllocationException(what + ": malformed reply of " + reply.byteSize() + " bytes from endpoint "
                    + Long.toHexString(peer.peerId()));
        }
        int status = reply.get(ValueLayout.JAVA_INT_UNALIGNED, REPLY_STATUS);
        if (status != STATUS_OK) {
            throw new RemoteAllocationException(what + " refused by endpoint " + Long.toHexString(peer.peerId()) + ": "
                    + status(status) + " (its limit " + reply.get(ValueLayout.JAVA_LONG_UNALIGNED, REPLY_LIMIT)
                    + " bytes, " + reply.get(ValueLayout.JAVA_LONG_UNALIGNED, REPLY_IN_USE) + " bytes granted)");
        }
        return reply;
    }

    private void onReply(Link from, int type, MemorySegment payload) {
        if (payload.byteSize() < REQUEST_ID + Long.BYTES) {
            throw new RemoteAllocationException("malformed reply of " + payload.byteSize() + " bytes (type 0x"
                    + Integer.toHexString(type) + ") from endpoint " + Long.toHexString(from.peerId()));
        }
        service.complete(payload.get(ValueLayout.JAVA_LONG_UNALIGNED, REQUEST_ID), payload);
    }

    // ------------------------------------------------------------------------------------------------- serving

    /** Runs on the service thread (the only writer of grants and grantedBytes). */
    private void serveAllocate(Link from, int type, MemorySegment request) {
        long requestId = request.byteSize() >= 8 ? request.get(ValueLayout.JAVA_LONG_UNALIGNED, REQUEST_ID) : -1;
        LocalRegion region = null;
        int status;
        if (request.byteSize() != ALLOCATE_REQUEST_LENGTH) {
            status = STATUS_MALFORMED;
        } else {
            long bytes = request.get(ValueLayout.JAVA_LONG_UNALIGNED, ALLOC_BYTES);
            int accessOrdinal = request.get(ValueLayout.JAVA_INT_UNALIGNED, ALLOC_ACCESS);
            RemoteAccess[] all = RemoteAccess.values();
            if (bytes <= 0 || accessOrdinal <= RemoteAccess.NONE.ordinal() || accessOrdinal >= all.length) {
                status = STATUS_MALFORMED;
            } else if (bytes > limitBytes - grantedBytes) {
                status = STATUS_OVER_LIMIT;
            } else {
                try {
                    region = source.allocate(bytes, all[accessOrdinal]);
                    grants.put(region.remote().regionId(), new Grant(region, from.peerId(), bytes));
                    grantedBytes += bytes; // volatile: only this thread writes it
                    status = STATUS_OK;
                } catch (RuntimeException e) {
                    System.getLogger("fabricrpc.memory").log(System.Logger.Level.WARNING, "remote allocation of "
                            + bytes + " bytes for endpoint " + Long.toHexString(from.peerId()) + " failed: " + e, e);
                    status = STATUS_ALLOCATION_FAILED;
                }
            }
        }
        reply(from, ALLOCATE_REPLY, requestId, status, region == null ? null : region.remote());
    }

    private void serveFree(Link from, int type, MemorySegment request) {
        long requestId = request.byteSize() >= 8 ? request.get(ValueLayout.JAVA_LONG_UNALIGNED, REQUEST_ID) : -1;
        int status;
        if (request.byteSize() != FREE_REQUEST_LENGTH) {
            status = STATUS_MALFORMED;
        } else {
            RemoteRegion handle;
            try {
                handle = RemoteRegion.decode(request, FREE_REGION);
            } catch (IllegalArgumentException e) {
                handle = null;
            }
            Grant grant = handle == null ? null : grants.get(handle.regionId());
            if (handle == null) {
                status = STATUS_MALFORMED;
            } else if (grant == null || grant.requester() != from.peerId() || !grant.region().remote().equals(handle)) {
                status = STATUS_UNKNOWN_REGION;
            } else {
                grants.remove(handle.regionId());
                grantedBytes -= grant.bytes();
                release.accept(grant.region());
                status = STATUS_OK;
            }
        }
        reply(from, FREE_REPLY, requestId, status, null);
    }

    private void reply(Link to, int type, long requestId, int status, RemoteRegion region) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment reply = arena.allocate(REPLY_LENGTH, 8);
            reply.set(ValueLayout.JAVA_LONG_UNALIGNED, REQUEST_ID, requestId);
            reply.set(ValueLayout.JAVA_INT_UNALIGNED, REPLY_STATUS, status);
            reply.set(ValueLayout.JAVA_LONG_UNALIGNED, REPLY_LIMIT, limitBytes);
            reply.set(ValueLayout.JAVA_LONG_UNALIGNED, REPLY_IN_USE, grantedBytes);
            if (region != null) {
                region.encode(reply, REPLY_REGION);
            }
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (!to.send(type, reply, 0, REPLY_LENGTH)) {
                to.checkAlive(); // a dead requester ends the wait (its grant stays until close)
                if (System.nanoTime() - deadline > 0) {
                    throw new RemoteAllocationException("the service queue of endpoint " + Long.toHexString(to.peerId())
                            + " stayed full for 10 s: reply to request " + requestId + " dropped");
                }
                LockSupport.parkNanos(10_000);
            }
        }
    }

    /** Releases every region still granted to peers (they must no longer use them). */
    @Override
    public void close() {
        for (Long id : grants.keySet()) {
            Grant grant = grants.remove(id);
            if (grant != null) {
                release.accept(grant.region());
            }
        }
    }
}
