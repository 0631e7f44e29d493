package io.fabricrpc.transport.rdma.hybrid;

import io.fabricrpc.transport.EndpointAddress;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.transport.MessageHandler;
import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.transport.Transport;
import io.fabricrpc.api.TransportException;
import io.fabricrpc.transport.rdma.spi.RdmaTransport;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The transport SPI over two inner endpoints, {@code fabric.transport=hybrid}: peers on this host are reached through
 * shared memory (an inner shm endpoint), peers on other hosts through RDMA (an inner rdma endpoint). For a job whose
 * hosts run several processes each: intra-host traffic stays off the NIC.
 *
 * <p><b>Addresses and path choice.</b> The {@linkplain HybridAddress address} carries the endpoint id (that of the
 * inner rdma endpoint, unique in the job), a host identity and both inner addresses. {@link #connect} takes the shm
 * path when the peer's host identity equals this endpoint's, the rdma path otherwise; a link keeps its path for its
 * life. The host identity is {@code hybrid.hostId} when set, else {@code <hostname>/<boot id>} (see
 * {@link HostIdentity}); tests give endpoints of one machine different host ids to force the rdma path.
 *
 * <p><b>Memory.</b> {@link #allocate} takes a region from the shm endpoint (a 0600 file in {@code shm.dir} when peers
 * get access) and registers the same memory with the rdma endpoint ({@link RdmaTransport#registerExternal}), so a
 * region is reachable by peers of either kind at once. Its {@link RemoteRegion} carries the rdma address and rkey
 * and the shm region id; each link translates it once into the inner handle (see {@link HybridLink}). Regions are
 * limited to 2^31 - 1 bytes (one registration) and are never backed by hugepages; {@code shm.dir} must be on tmpfs
 * (the default {@code /dev/shm}), since the kernel refuses long-term pins of pages of ordinary file systems.
 *
 * <p><b>Introductions.</b> The first message on every link a {@link #connect} creates is a HELLO (type
 * {@code 0x4D480001}, reserved: {@link Link#send} refuses it) carrying this endpoint's hybrid address. Inner
 * transports name a sender by its inner endpoint id only; the HELLO tells the receiver which hybrid peer that inner
 * endpoint belongs to before any other message of the peer arrives (a link is returned by {@code connect} only
 * after its HELLO was sent, and messages on one inner link arrive in order). {@link #pollMessages} consumes HELLOs
 * and does not count them. A message whose inner sender never introduced itself is a protocol error
 * ({@link TransportException}).
 *
 * <p><b>Messages.</b> {@link #maxMessageSize} is the smaller of the two inner limits, whichever path a link takes.
 * {@link #pollMessages} polls both inner endpoints, alternating which goes first, and hands the handler the hybrid
 * link of the sender (found without allocation: a last-sender cache, then a scan of a copy-on-write array).
 *
 * <p><b>Configuration.</b> {@code hybrid.hostId} (default: hostname/boot id), {@code hybrid.connectTimeoutMillis}
 * (10000: bound on sending the HELLO when the peer's queue is full); the whole configuration is passed on to the
 * inner endpoints, so {@code shm.*} and {@code rdma.*} keys apply to them.
 *
 * <p>Thread-safe; {@link #pollMessages} from one thread at a time. {@link #close} closes the rdma endpoint first
 * (its links fail, registrations go), then the shm endpoint (files are unmapped and removed).
 */
public final class HybridTransport implements Transport {
    public static final String KIND = HybridAddress.KIND;
    /** Message type of the introduction; reserved. */
    static final int HELLO = 0x4D480001;

    private final Transport shm;
    private final RdmaTransport rdma;
    private final String hostId;
    private final long endpointId;
    private final EndpointAddress address;
    private final long connectTimeoutNanos;
    private final int maxMessageSize;
    private final MemorySegment hello; // read-only: the HELLO payload
    private final ConcurrentHashMap<Long, HybridLink> links = new ConcurrentHashMap<>();
    private final Set<HybridLocalRegion> regions = ConcurrentHashMap.newKeySet();
    private final Object connectLock = new Object();
    private final Object routesLock = new Object();
    private final Routes shmRoutes = new Routes();
    private final Routes rdmaRoutes = new Routes();
    private final Dispatch fromShm = new Dispatch(shmRoutes, true);
    private final Dispatch fromRdma = new Dispatch(rdmaRoutes, false);
    private volatile boolean closed;

    // Poller thread only.
    private MessageHandler delivering;
    private int introductions;
    private boolean shmFirst;

    HybridTransport(Transport shm, RdmaTransport rdma, String hostId, long connectTimeoutMillis) {
        this.shm = shm;
        this.rdma = rdma;
        this.hostId = hostId;
        this.endpointId = rdma.endpointId();
        this.connectTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(connectTimeoutMillis);
        this.maxMessageSize = Math.min(shm.maxMessageSize(), rdma.maxMessageSize());
        this.address = new HybridAddress(endpointId, hostId, shm.address(), rdma.address()).encode();
        byte[] helloBytes = address.bytes();
        if (helloBytes.length > maxMessageSize) {
            throw new TransportException("the hybrid address (" + helloBytes.length + " bytes, host id '" + hostId
                    + "') does not fit a message of " + maxMessageSize + " bytes; shorten hybrid.hostId or shm.dir");
        }
        this.hello = MemorySegment.ofArray(helloBytes);
    }

    @Override
    public String kind() {
        return KIND;
    }

    @Override
    public long endpointId() {
        return endpointId;
    }

    @Override
    public EndpointAddress address() {
        return address;
    }

    /** This endpoint's host identity: peers with the same one are reached through shared memory. */
    public String hostId() {
        return hostId;
    }

    /**
     * The path a link of a hybrid endpoint takes: {@code "shm"} or {@code "rdma"}.
     *
     * @throws IllegalArgumentException if {@code link} is not a hybrid link
     */
    public static String pathOf(Link link) {
        if (link instanceof HybridLink hybrid) {
            return hybrid.innerKind();
        }
        throw new IllegalArgumentException("not a hybrid link: " + link);
    }

    @Override
    public int maxMessageSize() {
        return maxMessageSize;
    }

    @Override
    public boolean memoryFault(Throwable fault) {
        return shm.memoryFault(fault) | rdma.memoryFault(fault); // the mapped files are the shm endpoint's
    }

    @Override
    public void onEndpointFault(java.util.function.Consumer<String> listener) {
        shm.onEndpointFault(listener);
        rdma.onEndpointFault(listener);
    }

    @Override
    public LocalRegion allocate(long bytes, RemoteAccess access) {
        checkOpen("allocate");
        if (bytes <= 0 || bytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("hybrid region size must be in (0, 2^31 - 1], got " + bytes);
        }
        LocalRegion shmRegion = shm.allocate(bytes, access);
        LocalRegion rdmaRegion;
        try {
            rdmaRegion = rdma.registerExternal(shmRegion.segment(), access);
        } catch (RuntimeException e) {
            shmRegion.close();
            throw e;
        }
        RemoteRegion registered = rdmaRegion.remote();
        RemoteRegion remote = new RemoteRegion(endpointId, shmRegion.remote().regionId(), registered.address(), bytes,
                registered.key(), access);
        HybridLocalRegion region = new HybridLocalRegion(this, shmRegion, rdmaRegion, remote);
        regions.add(region);
        if (closed) { // close() may have missed it
            region.close();
            checkOpen("allocate");
        }
        return region;
    }

    void forget(HybridLocalRegion region) {
        regions.remove(region);
    }

    @Override
    public Link connect(EndpointAddress peer) {
        checkOpen("connect");
        HybridAddress target = HybridAddress.decode(peer);
        HybridLink existing = links.get(target.endpointId());
        if (existing != null) {
            return existing;
        }
        synchronized (connectLock) {
            existing = links.get(target.endpointId());
            if (existing != null) {
                return existing;
            }
            boolean sameHost = target.hostId().equals(hostId);
            Link inner = sameHost ? shm.connect(target.shm()) : rdma.connect(target.rdma());
            // Route the peer's inner id before the HELLO goes out: its replies may come at once. A route may exist
            // already (the peer's own HELLO raced this connect, or an earlier introduction failed); the peer ignores
            // a second HELLO.
            HybridLink link = route(new HybridLink(this, target.endpointId(), peer, inner, sameHost),
                    sameHost ? shmRoutes : rdmaRoutes, false);
            if (target.endpointId() != endpointId) {
                introduce(link);
            }
            HybridLink prior = links.putIfAbsent(target.endpointId(), link);
            return prior != null ? prior : link;
        }
    }

    /** Sends the HELLO on a new link; bounded by {@code hybrid.connectTimeoutMillis} while the peer's queue is full. */
    private void introduce(HybridLink link) {
        IdleStrategy idle = new BackoffIdleStrategy(10, 20, 1_000, 1_000_000);
        long deadline = System.nanoTime() + connectTimeoutNanos;
        while (!link.inner().send(HELLO, hello, 0, (int) hello.byteSize())) {
            if (System.nanoTime() - deadline > 0) {
                throw new PeerFailedException("hybrid endpoint " + Long.toHexString(link.peerId()), "its message "
                        + "queue stayed full for " + TimeUnit.NANOSECONDS.toMillis(connectTimeoutNanos)
                        + " ms (hybrid.connectTimeoutMillis) while introducing " + Long.toHexString(endpointId));
            }
            idle.idle();
        }
    }

    /**
     * Under the routes lock: makes {@code link} the route for its inner peer id unless one exists (then returns that
     * one); with {@code publish}, also the canonical link for its hybrid peer id.
     */
    private HybridLink route(HybridLink link, Routes routes, boolean publish) {
        synchronized (routesLock) {
            HybridLink existing = routes.find(link.inner().peerId());
            if (existing == null) {
                routes.add(link.inner().peerId(), link);
                existing = link;
            }
            if (publish) {
                HybridLink prior = links.putIfAbsent(existing.peerId(), existing);
                return prior != null ? prior : existing;
            }
            return existing;
        }
    }

    @Override
    public int pollMessages(MessageHandler handler, int limit) {
        checkOpen("pollMessages");
        delivering = handler;
        introductions = 0;
        shmFirst = !shmFirst; // neither inner endpoint can starve the other
        try {
            int count = shmFirst ? shm.pollMessages(fromShm, limit) : rdma.pollMessages(fromRdma, limit);
            if (count < limit) {
                count += shmFirst ? rdma.pollMessages(fromRdma, limit - count) : shm.pollMessages(fromShm, limit - count);
            }
            return count - introductions;
        } finally {
            delivering = null;
        }
    }

    /** A HELLO from an inner link: the sender's hybrid link, unless this endpoint already has one. */
    private void onHello(Link from, MemorySegment payload, boolean sharedMemory, Routes routes) {
        HybridAddress peer = HybridAddress.decode(payload.toArray(ValueLayout.JAVA_BYTE), "in a HELLO from " + from);
        // The hybrid id is the rdma endpoint id; an shm link knows its peer's address exactly.
        boolean consistent = sharedMemory ? peer.shm().equals(from.peerAddress()) : peer.endpointId() == from.peerId();
        if (!consistent) {
            throw new TransportException("HELLO from " + from + " names endpoint " + Long.toHexString(peer.endpointId())
                    + " at " + (sharedMemory ? peer.shm() : peer.rdma()) + " but came from " + from.peerAddress());
        }
        route(new HybridLink(this, peer.endpointId(), peer.encode(), from, sharedMemory), routes, true);
    }

    private void checkOpen(String operation) {
        if (closed) {
            throw new TransportException(operation + " on closed hybrid endpoint " + Long.toHexString(endpointId));
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        try {
            rdma.close(); // links fail, QPs and registrations go before the memory they reach
        } finally {
            try {
                for (HybridLocalRegion region : regions.toArray(HybridLocalRegion[]::new)) {
                    region.close(); // the registration is gone already; this unmaps
                }
            } finally {
                shm.close();
            }
        }
    }

    @Override
    public String toString() {
        return "HybridTransport[" + Long.toHexString(endpointId) + " on host '" + hostId + "']";
    }

    /** Inner peer id to hybrid link, for one inner kind: copy-on-write, read without locks or allocation. */
    private static final class Routes {
        private volatile long[] ids = new long[0];
        private volatile HybridLink[] links = new HybridLink[0];

        HybridLink find(long innerId) {
            HybridLink[] l = links; // volatile: written after ids, so ids has at least as many entries
            long[] i = ids;
            for (int k = 0; k < l.length; k++) {
                if (i[k] == innerId) {
                    return l[k];
                }
            }
            return null;
        }

        /** Under the routes lock. */
        void add(long innerId, HybridLink link) {
            long[] i = Arrays.copyOf(ids, ids.length + 1);
            i[i.length - 1] = innerId;
            HybridLink[] l = Arrays.copyOf(links, links.length + 1);
            l[l.length - 1] = link;
            ids = i; // volatile: before links, so a reader that sees the longer links sees the longer ids
            links = l;
        }
    }

    /** Delivers one inner endpoint's messages as messages of the hybrid links (poller thread only). */
    private final class Dispatch implements MessageHandler {
        private final Routes routes;
        private final boolean sharedMemory;
        private long lastInnerId;
        private HybridLink last;

        Dispatch(Routes routes, boolean sharedMemory) {
            this.routes = routes;
            this.sharedMemory = sharedMemory;
        }

        @Override
        public void onMessage(Link from, int type, MemorySegment payload) {
            if (type == HELLO) {
                introductions++;
                onHello(from, payload, sharedMemory, routes);
                return;
            }
            long innerId = from.peerId();
            HybridLink link = last;
            if (link == null || lastInnerId != innerId) {
                link = routes.find(innerId);
                if (link == null) {
                    throw new TransportException("message of type 0x" + Integer.toHexString(type) + " from "
                            + (sharedMemory ? "shm" : "rdma") + " endpoint " + Long.toHexString(innerId)
                            + ", which never introduced itself to hybrid endpoint " + Long.toHexString(endpointId)
                            + " (is the peer a plain '" + (sharedMemory ? "shm" : "rdma") + "' endpoint?)");
                }
                last = link;
                lastInnerId = innerId;
            }
            delivering.onMessage(link, type, payload);
        }
    }
}
