package io.fabricrpc.transport.rdma.spi;

import com.ibm.disni.RdmaEndpointGroup;
import com.ibm.disni.RdmaServerEndpoint;
import io.fabricrpc.transport.EndpointAddress;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.transport.MessageHandler;
import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.transport.Transport;
import io.fabricrpc.api.TransportException;
import io.fabricrpc.transport.rdma.nativelib.DisniNativeLibrary;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * The transport SPI over RDMA verbs through DiSNI: one listening RDMA CM endpoint per transport, one RC queue pair per
 * {@link RdmaLink link} (see the package doc: ordering, completion tickets, selective signaling, message credits).
 *
 * <p>{@link #connect} makes a QP to the peer's listener; the accepting side turns the accepted QP into its link to the
 * connecting peer (each side's first SEND is a handshake naming its endpoint id, listener address and the control
 * block the peer may read). A connect to this endpoint's own address makes a second QP to itself (loopback; its
 * operations complete before they return). Memory comes from {@link #allocate}: page-aligned off-heap memory
 * registered with the protection domain of the device with {@code LOCAL_WRITE} plus exactly the remote rights asked
 * for; regions of 2 MiB and more are backed by 2 MiB hugepages when the system has free ones
 * ({@link #isHugePageBacked}).
 *
 * <p>Configuration: the {@code rdma.*} settings, parsed and checked by {@code RdmaSettings}.
 *
 * <p>The endpoint id is {@code ipv4 << 32 | port << 16 | (pid ^ n) & 0xffff}: unique among live listeners of a job.
 * Thread-safe; {@link #pollMessages} from one thread at a time.
 */
public final class RdmaTransport implements Transport {
    public static final String KIND = "rdma";
    private static final AtomicInteger ENDPOINTS_IN_JVM = new AtomicInteger();

    private final RdmaSettings settings;
    private final QpEndpointGroup group;
    private final RdmaServerEndpoint<QpEndpoint> listener;
    private final int port;
    private final long endpointId;
    private final EndpointAddress address;
    private final RdmaRegions regions;
    private final RdmaLinkTable links = new RdmaLinkTable();
    private final Object connectLock = new Object();
    private final Thread acceptor;
    private final Thread heartbeat;
    private volatile boolean closed;

    /** Transport and RNR retries of every connection this transport makes or accepts. */
    public static final byte CONNECTION_RETRIES = 7;

    /**
     * Gives {@code group}'s connections {@value #CONNECTION_RETRIES} transport and RNR retries. DiSNI's default is 0,
     * so a single packet the device drops (rxe does under load) ends the QP with IBV_WC_RETRY_EXC_ERR. Public for
     * other DiSNI users in the same job (the benchmarks' DaRPC baseline).
     */
    public static void applyConnectionRetries(RdmaEndpointGroup<?> group) throws IOException {
        group.getConnParam().setRetry_count(CONNECTION_RETRIES);
        group.getConnParam().setRnr_retry_count(CONNECTION_RETRIES);
    }

    RdmaTransport(RdmaSettings settings) {
        this.settings = settings;
        DisniNativeLibrary.load();
        InetSocketAddress bound;
        try {
            // maxSge: writeFirstByteAs gathers two pieces into one WRITE.
            group = new QpEndpointGroup(100, Math.max(settings.sqDepth(), settings.recvDepth()) + 1,
                    RdmaWrites.GATHER_SGES,
                    settings.sqDepth() + settings.recvDepth() + 1);
            applyConnectionRetries(group);
            group.init((id, serverSide) -> {
                QpEndpoint endpoint = new QpEndpoint(group, id, serverSide);
                if (serverSide) {
                    links.track(new RdmaLink(this, endpoint, 0)); // peer id from its handshake
                }
                return endpoint;
            });
            listener = group.createServerEndpoint();
            listener.bind(new InetSocketAddress(settings.bindAddress(), settings.port()), 64);
            bound = (InetSocketAddress) listener.getSrcAddr();
        } catch (TransportException e) {
            throw e;
        } catch (Exception e) {
            throw new TransportException("cannot listen for RDMA connections on " + settings.bindAddress().getHostAddress()
                    + ":" + settings.port() + " (rdma.bindAddress must be the IPv4 address of an RDMA interface, "
                    + "rdma.port free): " + e, e);
        }
        this.port = bound.getPort();
        long salt = (ProcessHandle.current().pid() ^ ENDPOINTS_IN_JVM.incrementAndGet()) & 0xFFFF;
        this.endpointId = (Integer.toUnsignedLong(RdmaAddresses.ipv4(settings.bindAddress())) << 32)
                | ((long) port << 16) | salt;
        this.address = RdmaAddresses.encode(settings.bindAddress(), port, endpointId);
        this.regions = new RdmaRegions(listener.getPd(), endpointId);
        this.acceptor = Thread.ofPlatform().daemon().name("fabricrpc-rdma-accept-" + Long.toHexString(endpointId))
                .start(this::acceptLoop);
        this.heartbeat = settings.heartbeatMillis() == 0 ? null
                : Thread.ofPlatform().daemon().name("fabricrpc-rdma-heartbeat-" + Long.toHexString(endpointId))
                        .start(this::heartbeatLoop);
    }

    private void heartbeatLoop() {
        long periodNanos = settings.heartbeatMillis() * 1_000_000L;
        while (!closed) {
            LockSupport.parkNanos(periodNanos);
            if (closed || Thread.interrupted()) {
                return;
            }
            long now = System.nanoTime();
            for (RdmaLink link : links.all()) {
                link.heartbeat(now);
            }
        }
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

    @Override
    public int maxMessageSize() {
        return settings.maxMessageSize();
    }

    @Override
    public LocalRegion allocate(long bytes, RemoteAccess access) {
        checkOpen("allocate");
        return regions.allocate(this, bytes, access);
    }

    /**
     * True if {@code region} (allocated by this transport) is backed by 2 MiB hugepages; false if it is plain
     * page-aligned memory (smaller than 2 MiB, or no free hugepages when it was allocated).
     */
    public boolean isHugePageBacked(LocalRegion region) {
        return regions.isHugePageBacked(region.segment().address());
    }

    /**
     * Registers memory the caller owns (a registration cache's bucket, say) with the same access flags as
     * {@link #allocate}. Closing the returned region deregisters it and never frees the memory; the caller keeps the
     * memory mapped until then.
     *
     * @throws IllegalArgumentException if the segment is not native or not in (0, 2^31 - 1] bytes
     * @throws TransportException if the device refuses the registration (the message says why)
     */
    public LocalRegion registerExternal(MemorySegment segment, RemoteAccess access) {
        checkOpen("registerExternal");
        return regions.registerExternal(this, segment, access);
    }

    /**
     * The local key of a region of this transport (for callers that build their own work requests).
     *
     * @throws IllegalArgumentException if the region is not an rdma region
     */
    public static int localKey(LocalRegion region) {
        if (!(region instanceof RdmaLocalRegion r)) {
            throw new IllegalArgumentException("not an rdma region: " + region);
        }
        return r.lkey();
    }

    /** This transport's registered memory: its regions, and the links' own registrations. */
    RdmaRegions regions() {
        return regions;
    }

    @Override
    public Link connect(EndpointAddress peer) {
        checkOpen("connect");
        RdmaAddresses.Decoded target = RdmaAddresses.decode(peer);
        RdmaLink existing = links.get(target.endpointId());
        if (existing != null) {
            return existing;
        }
        synchronized (connectLock) {
            existing = links.get(target.endpointId());
            if (existing != null) {
                return existing;
            }
            String name = "rdma endpoint " + Long.toHexString(target.endpointId()) + " at "
                    + target.ip().getHostAddress() + ":" + target.port();
            io.fabricrpc.transport.ConnectionSetupEvent event = new io.fabricrpc.transport.ConnectionSetupEvent();
            event.begin(); // once per peer: a slow path
            try {
                RdmaLink link = connectLink(target, name);
                event.finish("rdma", name, "connected");
                return link;
            } catch (RuntimeException e) {
                event.finish("rdma", name, "failed: " + e.getMessage());
                throw e;
            }
        }
    }

    /** Holding connectLock: a new QP to {@code target}, connected and past the handshake. */
    private RdmaLink connectLink(RdmaAddresses.Decoded target, String name) {
        RdmaLink link;
        try {
            link = new RdmaLink(this, group.createEndpoint(), target.endpointId());
        } catch (IOException e) {
            throw new TransportException("cannot create an RDMA endpoint to connect to " + name + ": " + e.getMessage(), e);
        }
        links.track(link);
        try {
            link.endpoint.connect(new InetSocketAddress(target.ip(), target.port()),
                    (int) settings.connectTimeoutMillis());
            link.sendHello();
            link.awaitHello(settings.connectTimeoutMillis());
        } catch (ConnectException e) {
            links.discard(link, "connect failed");
            throw new PeerFailedException(name, "absent or closed: " + e.getMessage());
        } catch (PeerFailedException e) {
            links.discard(link, "handshake failed");
            throw new PeerFailedException(name, "handshake failed: " + e.getMessage());
        } catch (Exception e) {
            links.discard(link, "connect failed");
            throw new TransportException("RDMA connect to " + name + " failed: " + e, e);
        }
        RdmaLink prior = links.putIfAbsent(target.endpointId(), link);
        return prior != null ? prior : link;
    }

    @Override
    public int pollMessages(MessageHandler handler, int limit) {
        checkOpen("pollMessages");
        int count = 0;
        for (RdmaLink link : links.all()) {
            if (count >= limit) {
                break;
            }
            count += link.deliver(handler, limit - count);
        }
        return count;
    }

    /** The link a message's handler gets: the canonical link to {@code peerId}, else the one it arrived on. */
    Link linkFor(long peerId, RdmaLink arrivedOn) {
        RdmaLink canonical = links.get(peerId);
        return canonical != null ? canonical : arrivedOn;
    }

    private void acceptLoop() {
        while (!closed) {
            QpEndpoint endpoint;
            try {
                endpoint = listener.accept();
            } catch (IOException e) {
                if (closed) {
                    return;
                }
                continue; // a failed accept concerns that one connection request only
            }
            if (endpoint == null || endpoint.link() == null) {
                continue;
            }
            RdmaLink link = endpoint.link();
            try {
                link.sendHello();
                link.awaitHello(settings.connectTimeoutMillis());
                if (link.peerId() != endpointId) {
                    links.putIfAbsent(link.peerId(), link); // the reverse link for the connecting peer
                }
            } catch (RuntimeException e) {
                links.discard(link, "handshake with an accepted peer failed: " + e.getMessage());
            }
        }
    }

    int sqDepth() {
        return settings.sqDepth();
    }

    int recvDepth() {
        return settings.recvDepth();
    }

    int signalInterval() {
        return settings.signalInterval();
    }

    long operationTimeoutMillis() {
        return settings.operationTimeoutMillis();
    }

    int ipv4() {
        return RdmaAddresses.ipv4(settings.bindAddress());
    }

    int port() {
        return port;
    }

    private void checkOpen(String operation) {
        if (closed) {
            throw new TransportException(operation + " on closed rdma endpoint " + Long.toHexString(endpointId));
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
        acceptor.interrupt();
        if (heartbeat != null) {
            LockSupport.unpark(heartbeat);
        }
        try {
            acceptor.join(5000);
            if (heartbeat != null) {
                heartbeat.join(5000); // it must not touch a link whose resources go below
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        String reason = "this endpoint (" + Long.toHexString(endpointId) + ") is closed";
        for (RdmaLink link : links.all()) {
            link.fail(reason); // every waiter ends before the resources go
        }
        for (RdmaLink link : links.all()) {
            link.close(reason);
        }
        links.clearCanonical();
        regions.closeAll();
        try {
            listener.close();
            group.close();
        } catch (IOException | RuntimeException e) {
            throw new TransportException("closing rdma endpoint " + Long.toHexString(endpointId) + " failed: " + e
                    + " (its link memory stays allocated)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return; // the group may still run: keep the link memory
        }
        // No QP, CM id or CM thread is left: nothing can reach the link memory any more.
        links.releaseMemory();
    }

    @Override
    public String toString() {
        return "RdmaTransport[" + Long.toHexString(endpointId) + " at " + settings.bindAddress().getHostAddress() + ":"
                + port + "]";
    }
}
