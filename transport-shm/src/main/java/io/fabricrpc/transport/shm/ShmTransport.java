package io.fabricrpc.transport.shm;

import io.fabricrpc.transport.EndpointAddress;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.transport.MessageHandler;
import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.transport.Transport;
import io.fabricrpc.api.TransportException;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The transport SPI over memory-mapped files in a per-user directory (default {@code /dev/shm}): between threads
 * of one JVM (several endpoints, or a loopback link) and between processes of one host.
 *
 * <p>An endpoint owns one endpoint file (header, heartbeat, incoming message ring) and one file per region that
 * peers may access. A daemon liveness thread beats this endpoint's heartbeat and checks every linked peer each
 * {@code shm.heartbeatMillis}: a peer whose process is gone (or recycled), that closed, or whose heartbeat is
 * older than {@code shm.peerTimeoutMillis} is marked failed, and every wait on it ends.
 *
 * <p>Configuration keys: {@code shm.dir} (base directory, default {@code /dev/shm}), {@code shm.messageQueueBytes}
 * (power of two, default 65536), {@code shm.directWindows} (default true; false: no peer memory mapped for direct
 * stores, so the protocols take RDMA's staged path), {@code shm.heartbeatMillis} (default 20), {@code shm.peerTimeoutMillis}
 * (default 10000).
 */
public final class ShmTransport implements Transport {
    public static final String KIND = "shm";
    private static final AtomicInteger ENDPOINTS_IN_JVM = new AtomicInteger();

    private final ShmDirectory directory;
    private final long endpointId;
    private final long pid;
    private final long startTime;
    private final int ringCapacity;
    private final long heartbeatMillis;
    private final long peerTimeoutMillis;
    final boolean directWindows;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment endpointFile;
    private final ManyToOneRingBuffer incoming;
    private final EndpointAddress address;
    private final AtomicLong regionIds = new AtomicLong();
    private final ConcurrentHashMap<Long, ShmLink> links = new ConcurrentHashMap<>();
    private final java.util.Set<ShmLocalRegion> regions = ConcurrentHashMap.newKeySet();
    private final Thread liveness;
    private volatile boolean closed;
    /** Why this endpoint's own file can no longer be used (cut short under it); set once, by CAS. */
    private volatile String ownFault;
    /** Told once when {@link #ownFault} is set; set before the endpoint is shared. */
    private volatile java.util.function.Consumer<String> faultListener = reason -> { };
    private static final java.lang.invoke.VarHandle OWN_FAULT;

    static {
        try {
            OWN_FAULT = java.lang.invoke.MethodHandles.lookup().findVarHandle(ShmTransport.class, "ownFault",
                    String.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private MessageHandler currentHandler;
    /** The poller's last sender, so a stream of messages from one peer needs no map lookup (poller thread only). */
    private ShmLink lastSender;
    private final org.agrona.concurrent.MessageHandler ringReader = this::deliver;

    ShmTransport(Path baseDirectory, int ringCapacity, long heartbeatMillis, long peerTimeoutMillis) {
        this(baseDirectory, ringCapacity, heartbeatMillis, peerTimeoutMillis, true);
    }

    /**
     * @param directWindows whether links hand out {@link Link#directWindow}s into peer memory ({@code shm.directWindows},
     *                      default true); false makes protocols take the staged path they take over RDMA
     */
    ShmTransport(Path baseDirectory, int ringCapacity, long heartbeatMillis, long peerTimeoutMillis,
                 boolean directWindows) {
        this.directWindows = directWindows;
        if (Integer.bitCount(ringCapacity) != 1 || ringCapacity < 1024) {
            throw new TransportException("shm.messageQueueBytes must be a power of two >= 1024, got " + ringCapacity);
        }
        this.directory = ShmDirectory.open(baseDirectory);
        this.directory.removeStaleFiles();
        this.pid = ProcessLiveness.currentPid();
        this.startTime = Math.max(0, ProcessLiveness.startTime(pid));
        this.endpointId = (pid << 20) | (ENDPOINTS_IN_JVM.incrementAndGet() & 0xFFFFF);
        this.ringCapacity = ringCapacity;
        this.heartbeatMillis = heartbeatMillis;
        this.peerTimeoutMillis = peerTimeoutMillis;
        this.endpointFile = directory.create(directory.endpointFile(endpointId),
                EndpointSegmentDescriptor.fileLength(ringCapacity), arena);
        MemorySegment ring = endpointFile.asSlice(EndpointSegmentDescriptor.RING_OFFSET,
                EndpointSegmentDescriptor.ringLength(ringCapacity));
        this.incoming = new ManyToOneRingBuffer(new UnsafeBuffer(ring.address(), (int) ring.byteSize()));
        SegmentHeaderDescriptor.initialize(endpointFile, SegmentHeaderDescriptor.KIND_ENDPOINT, pid, startTime,
                endpointId, 0, ringCapacity, RemoteAccess.WRITE.ordinal());
        this.address = encodeAddress(directory.path(), endpointId);
        this.liveness = Thread.ofPlatform().daemon().name("fabricrpc-shm-liveness-" + Long.toHexString(endpointId))
                .start(new ShmLiveness(this, endpointFile, heartbeatMillis, peerTimeoutMillis));
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
    public LocalRegion allocate(long bytes, RemoteAccess access) {
        checkOpen("allocate");
        if (bytes <= 0) {
            throw new IllegalArgumentException("region size must be > 0, got " + bytes);
        }
        long regionId = regionIds.incrementAndGet();
        RemoteRegion remote = new RemoteRegion(endpointId, regionId, 0, bytes, 0, access);
        Arena regionArena = Arena.ofShared();
        if (access == RemoteAccess.NONE) {
            // Peers never see it: plain off-heap memory, page-aligned like the mapped ones.
            return track(new ShmLocalRegion(this, regionArena, null, regionArena.allocate(bytes, 4096), remote, null));
        }
        Path file = directory.regionFile(endpointId, regionId);
        MemorySegment mapped = directory.create(file, SegmentHeaderDescriptor.HEADER_LENGTH + bytes, regionArena);
        SegmentHeaderDescriptor.initialize(mapped, SegmentHeaderDescriptor.KIND_REGION, pid, startTime, endpointId,
                regionId, bytes, access.ordinal());
        return track(new ShmLocalRegion(this, regionArena, mapped,
                mapped.asSlice(SegmentHeaderDescriptor.HEADER_LENGTH, bytes), remote, file));
    }

    private ShmLocalRegion track(ShmLocalRegion region) {
        regions.add(region);
        return region;
    }

    void forget(ShmLocalRegion region) {
        regions.remove(region);
    }

    @Override
    public Link connect(EndpointAddress peer) {
        checkOpen("connect");
        if (!KIND.equals(peer.kind())) {
            throw new TransportException("cannot connect an shm endpoint to a '" + peer.kind() + "' address " + peer);
        }
        ByteBuffer bytes = ByteBuffer.wrap(peer.bytes()).order(ByteOrder.LITTLE_ENDIAN);
        long peerId = bytes.getLong();
        String peerDirectory = StandardCharsets.UTF_8.decode(bytes).toString();
        if (!Path.of(peerDirectory).equals(directory.path())) {
            throw new TransportException("peer endpoint " + Long.toHexString(peerId) + " uses shm directory "
                    + peerDirectory + ", this endpoint uses " + directory.path() + " (shm.dir must match)");
        }
        return link(peerId);
    }

    ShmLink link(long peerId) {
        ShmLink existing = links.get(peerId);
        if (existing != null) {
            return existing;
        }
        synchronized (links) {
            existing = links.get(peerId);
            if (existing == null) {
                io.fabricrpc.transport.ConnectionSetupEvent event = new io.fabricrpc.transport.ConnectionSetupEvent();
                event.begin(); // once per peer: a slow path
                String peer = "shm endpoint " + Long.toHexString(peerId);
                try {
                    existing = openLink(peerId);
                } catch (RuntimeException e) {
                    event.finish(KIND, peer, "failed: " + e.getMessage());
                    throw e;
                }
                event.finish(KIND, peer, "connected");
                links.put(peerId, existing);
            }
            return existing;
        }
    }

    private ShmLink openLink(long peerId) {
        Arena linkArena = Arena.ofShared();
        EndpointAddress peerAddress = encodeAddress(directory.path(), peerId);
        if (peerId == endpointId) {
            return new ShmLink(this, peerId, peerAddress, endpointFile, linkArena, true);
        }
        Path file = directory.endpointFile(peerId);
        String name = "shm endpoint " + Long.toHexString(peerId);
        MemorySegment peerFile;
        try {
            peerFile = directory.map(file, true, linkArena, SegmentHeaderDescriptor.HEADER_LENGTH);
        } catch (NoSuchFileException e) {
            linkArena.close();
            throw new PeerFailedException(name, "absent: no endpoint file " + file);
        }
        try {
            if (!SegmentHeaderDescriptor.isComplete(peerFile)
                    || SegmentHeaderDescriptor.kind(peerFile) != SegmentHeaderDescriptor.KIND_ENDPOINT
                    || SegmentHeaderDescriptor.endpointId(peerFile) != peerId) {
                throw new TransportException("file " + file + " is not a complete endpoint header for "
                        + Long.toHexString(peerId));
            }
            if (SegmentHeaderDescriptor.version(peerFile) != SegmentHeaderDescriptor.LAYOUT_VERSION
                    || SegmentHeaderDescriptor.dataLength(peerFile) != ringCapacity) {
                throw new TransportException("peer " + Long.toHexString(peerId) + " has layout version "
                        + SegmentHeaderDescriptor.version(peerFile) + " and message queue "
                        + SegmentHeaderDescriptor.dataLength(peerFile) + " bytes; this endpoint has version "
                        + SegmentHeaderDescriptor.LAYOUT_VERSION + " and " + ringCapacity + " bytes");
            }
            if (peerFile.byteSize() < EndpointSegmentDescriptor.fileLength(ringCapacity)) {
                throw new TransportException("endpoint file " + file + " has " + peerFile.byteSize() + " bytes, "
                        + "expected " + EndpointSegmentDescriptor.fileLength(ringCapacity) + " (truncated)");
            }
            long peerPid = SegmentHeaderDescriptor.ownerPid(peerFile);
            if (SegmentHeaderDescriptor.state(peerFile) != SegmentHeaderDescriptor.STATE_ACTIVE) {
                throw new PeerFailedException(name, "it closed its endpoint");
            }
            if (!ProcessLiveness.isSameProcessAlive(peerPid, SegmentHeaderDescriptor.ownerStart(peerFile))) {
                throw new PeerFailedException(name, "process " + peerPid + " is dead (stale file " + file + ")");
            }
            return new ShmLink(this, peerId, peerAddress, peerFile, linkArena, false);
        } catch (RuntimeException e) {
            linkArena.close();
            throw e;
        }
    }

    @Override
    public int maxMessageSize() {
        return EndpointSegmentDescriptor.maxMessageSize(ringCapacity);
    }

    @Override
    public int pollMessages(MessageHandler handler, int limit) {
        checkOpen("pollMessages");
        if (ownFault != null) {
            return 0; // the ring is gone with the file: reported once, and every link of this endpoint failed
        }
        currentHandler = handler;
        try {
            return incoming.read(ringReader, limit);
        } catch (InternalError e) { // what a fault in a mapping becomes
            if (faulted(e) && ownFault != null) {
                return 0;
            }
            throw e;
        } finally {
            currentHandler = null;
        }
    }

    @Override
    public boolean memoryFault(Throwable fault) {
        return faulted(fault);
    }

    @Override
    public void onEndpointFault(java.util.function.Consumer<String> listener) {
        faultListener = java.util.Objects.requireNonNull(listener);
    }

    /** Why this endpoint's own file is unusable, or null: every link of it fails with this reason. */
    String ownFault() {
        return ownFault;
    }

    /**
     * A thread touching shared memory caught {@code fault} (a file cut short under its mapping turns into
     * InternalError), or null from the periodic check: finds the files cut short and fails what they carry, this
     * endpoint's own file failing every link. True if it found one (each reported once), false if the fault is not
     * explained by a short file.
     */
    boolean faulted(Throwable fault) {
        Path own = directory.endpointFile(endpointId);
        if (ownFault == null && ShmDirectory.isShorterThan(own, EndpointSegmentDescriptor.fileLength(ringCapacity))
                && OWN_FAULT.compareAndSet(this, null, "this endpoint's own file " + own + " was cut short under its "
                        + "mapping (truncated?)" + (fault == null ? "" : ": " + fault))) {
            links.values().forEach(ShmLink::runFailureHooks);
            System.getLogger("fabricrpc.shm").log(System.Logger.Level.ERROR, ownFault + "; every link of endpoint "
                    + Long.toHexString(endpointId) + " fails", fault);
            try {
                faultListener.accept(ownFault); // once: only the CAS winner gets here
            } catch (RuntimeException e) {
                System.getLogger("fabricrpc.shm").log(System.Logger.Level.ERROR, "endpoint fault listener failed", e);
            }
        }
        boolean found = ownFault != null;
        for (ShmLink link : links.values()) {
            found |= link.checkFiles(fault);
        }
        return found;
    }

    private void deliver(int type, org.agrona.MutableDirectBuffer buffer, int index, int length) {
        long sender = buffer.getLong(index, java.nio.ByteOrder.LITTLE_ENDIAN);
        MemorySegment payload = endpointFile.asSlice(EndpointSegmentDescriptor.RING_OFFSET + index
                + EndpointSegmentDescriptor.SENDER_ID_LENGTH, length - EndpointSegmentDescriptor.SENDER_ID_LENGTH);
        ShmLink from = lastSender;
        if (from == null || from.peerId() != sender) {
            from = link(sender);
            lastSender = from;
        }
        currentHandler.onMessage(from, type, payload);
    }

    int ringCapacity() {
        return ringCapacity;
    }

    ShmDirectory directory() {
        return directory;
    }

    /** The links made so far, for the liveness thread's checks (a weakly consistent view). */
    Iterable<ShmLink> links() {
        return links.values();
    }

    boolean isClosed() {
        return closed;
    }

    private void checkOpen(String operation) {
        if (closed) {
            throw new TransportException(operation + " on closed shm endpoint " + Long.toHexString(endpointId));
        }
    }

    @Override
    public void close() {
        synchronized (links) {
            if (closed) {
                return;
            }
            closed = true;
        }
        links.values().forEach(ShmLink::runFailureHooks); // senders into windows look at their links from now on
        SegmentHeaderDescriptor.setState(endpointFile, SegmentHeaderDescriptor.STATE_CLOSED); // release: peers see the close
        liveness.interrupt();
        try {
            liveness.join(1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        links.values().forEach(ShmLink::close);
        links.clear();
        regions.forEach(ShmLocalRegion::close);
        ShmDirectory.deleteQuietly(directory.endpointFile(endpointId));
        arena.close();
    }

    static EndpointAddress encodeAddress(Path directory, long endpointId) {
        byte[] dir = directory.toString().getBytes(StandardCharsets.UTF_8);
        ByteBuffer bytes = ByteBuffer.allocate(8 + dir.length).order(ByteOrder.LITTLE_ENDIAN);
        bytes.putLong(endpointId).put(dir);
        return new EndpointAddress(KIND, bytes.array());
    }

    @Override
    public String toString() {
        return "ShmTransport[" + Long.toHexString(endpointId) + " in " + directory.path() + "]";
    }

}
