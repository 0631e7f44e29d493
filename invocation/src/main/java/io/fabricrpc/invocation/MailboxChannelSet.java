package io.fabricrpc.invocation;

import io.fabricrpc.api.ThreadId;
import io.fabricrpc.fabric.ControlPlane;
import io.fabricrpc.mailbox.MailboxChannels;
import io.fabricrpc.mailbox.MailboxClient;
import io.fabricrpc.mailbox.MailboxConfig;
import io.fabricrpc.mailbox.MailboxException;
import io.fabricrpc.mailbox.MailboxServer;
import io.fabricrpc.api.MessagingException;
import io.fabricrpc.messaging.ServiceDispatcher;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.transport.Transport;
import org.agrona.concurrent.BackoffIdleStrategy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;

/**
 * The mailbox channels of {@code callReturn}: one per (caller process, destination worker), made on first use. The
 * caller allocates its side and asks the destination process through the service messages below (the channel to a
 * worker of its own process is a loopback pair); the destination's service thread allocates the server side and
 * adds it to the worker's list, which the worker polls in {@code processCalls}. Invariant: a client is published
 * (array CAS) only once its server is in the worker's list, and both sides agree on ports and packet size.
 *
 * <pre>
 * OPEN  (caller -> destination): | request id (8) | caller rank (4) | worker (4) | ports (4) | packet (4) | client region (40) |
 * OPENED (destination -> caller): | request id (8) | status (4) | ports (4) | packet (4) | (4) | server region (40) |
 * </pre>
 */
final class MailboxChannelSet implements AutoCloseable {
    static final int OPEN = 0x4D420010;
    static final int OPENED = 0x4D420011;
    static final String PORTS_KEY = "fabric.mailbox.ports";
    static final String MAX_MESSAGE_KEY = "fabric.mailbox.maxMessageBytes";
    static final String OPEN_TIMEOUT_KEY = "fabric.mailbox.openTimeoutMs";
    private static final int OPEN_LENGTH = 24 + RemoteRegion.ENCODED_LENGTH;
    private static final int OPENED_LENGTH = 24 + RemoteRegion.ENCODED_LENGTH;
    private static final int STATUS_OK = 0;
    private static final int STATUS_MISMATCH = 1;
    private static final int STATUS_NO_WORKER = 2;
    private static final int STATUS_FENCED = 3;

    /** A server side and the rank of the process that calls through it. */
    record Served(MailboxServer server, int callerRank) {
    }

    private final FabricRuntime runtime;
    private final Transport transport;
    private final ServiceDispatcher service;
    private final MailboxConfig config;
    private final int rank;
    private final int threads;
    private final AtomicReferenceArray<MailboxClient> clients;
    private final List<MailboxClient> allClients = new CopyOnWriteArrayList<>();
    /** Per local worker: the servers of every process calling it (appended by the service thread). */
    private final List<Served>[] served;
    /** Set once by the bootstrap thread after the join (volatile store); null while peers may already open. */
    private volatile ControlPlane plane;

    @SuppressWarnings("unchecked")
    MailboxChannelSet(FabricRuntime runtime, Transport transport, ServiceDispatcher service, int rank, int size,
                      int threads, int packetSize, Duration callTimeout, Map<String, String> settings) {
        this.runtime = runtime;
        this.transport = transport;
        this.service = service;
        this.rank = rank;
        this.threads = threads;
        int ports = intSetting(settings, PORTS_KEY, 64);
        long maxMessage = longSetting(settings, MAX_MESSAGE_KEY, 16L << 20);
        long openMillis = longSetting(settings, OPEN_TIMEOUT_KEY, callTimeout.toMillis());
        // Waiters run the caller's incoming calls each round (whileWaiting), so the idle strategy only yields briefly.
        this.config = new MailboxConfig(ports, packetSize, Duration.ofMillis(openMillis), callTimeout, maxMessage,
                () -> new BackoffIdleStrategy(100, 20, 1_000, 20_000));
        this.clients = new AtomicReferenceArray<>(size * threads);
        this.served = new List[threads];
        for (int i = 0; i < threads; i++) {
            served[i] = new CopyOnWriteArrayList<>();
        }
        service.register(OPEN, this::serveOpen);
        service.register(OPENED, (from, type, payload) ->
                service.complete(payload.get(ValueLayout.JAVA_LONG_UNALIGNED, 0), payload));
    }

    /**
     * The joined job's control plane. An OPEN served before this comes from a member of the just-formed job; if that
     * member fails meanwhile, the listener the bootstrap adds afterwards replays the departure to {@link #peerFailed}.
     */
    void joined(ControlPlane joinedPlane) {
        this.plane = joinedPlane;
    }

    /** False only once the job declared {@code callerRank} failed; true before the join completes. */
    private boolean callerAlive(int callerRank) {
        ControlPlane p = plane; // volatile load
        return p == null || p.isAlive(callerRank);
    }

    MailboxConfig config() {
        return config;
    }

    List<Served> servedBy(int worker) {
        return served[worker];
    }

    /** The channel to global worker {@code global}, set up on first use (a round trip to its process). */
    MailboxClient client(int global) {
        MailboxClient client = clients.get(global);
        return client != null ? client : open(global);
    }

    private synchronized MailboxClient open(int global) {
        MailboxClient client = clients.get(global);
        if (client != null) {
            return client;
        }
        int destRank = global / threads;
        int worker = global % threads;
        runtime.checkAlive(destRank);
        if (destRank == rank) {
            MailboxChannels.Pair pair = MailboxChannels.loopback(transport, config);
            served[worker].add(new Served(pair.server(), rank));
            client = pair.client();
        } else {
            client = connect(destRank, worker);
        }
        client.onReply(runtime.returnCalls());
        client.whileWaiting(() -> {
            runtime.checkAlive(destRank); // the fabric's failure detection bounds every wait on a dead peer
            runtime.help();
        });
        allClients.add(client);
        clients.set(global, client); // volatile: the client is complete before another thread sees it
        return client;
    }

    private MailboxClient connect(int destRank, int worker) {
        Link link = runtime.link(destRank);
        LocalRegion[] regions = MailboxChannels.allocate(transport, config);
        try (Arena arena = Arena.ofConfined()) {
            long requestId = service.newRequest();
            MemorySegment request = arena.allocate(OPEN_LENGTH, 8);
            request.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, requestId);
            request.set(ValueLayout.JAVA_INT_UNALIGNED, 8, rank);
            request.set(ValueLayout.JAVA_INT_UNALIGNED, 12, worker);
            request.set(ValueLayout.JAVA_INT_UNALIGNED, 16, config.ports());
            request.set(ValueLayout.JAVA_INT_UNALIGNED, 20, config.packetSize());
            regions[0].remote().encode(request, 24);
            long deadline = System.nanoTime() + config.replyTimeout().toNanos();
            while (!link.send(OPEN, request, 0, OPEN_LENGTH)) {
                runtime.checkAlive(destRank);
                if (System.nanoTime() - deadline > 0) {
                    throw new MessagingException("the service queue of rank " + destRank + " stayed full: mailbox"
                            + " channel to worker " + worker + " not requested");
                }
                LockSupport.parkNanos(10_000);
            }
            MemorySegment reply = MemorySegment.ofArray(service.await(requestId, link,
                    Math.max(0, deadline - System.nanoTime()), "mailbox channel to " + new ThreadId(destRank, worker)));
            int status = reply.get(ValueLayout.JAVA_INT_UNALIGNED, 8);
            if (status == STATUS_FENCED) { // the job declared this process failed: fail-stop, as checkAlive would
                throw new io.fabricrpc.api.PeerFailedException(destRank, "it refused a mailbox channel to worker "
                        + worker + " because the job declared this rank failed (fenced)", false);
            }
            if (status != STATUS_OK) {
                throw new MailboxException("rank " + destRank + " refused a mailbox channel to worker " + worker + ": "
                        + (status == STATUS_MISMATCH ? "it has " + reply.get(ValueLayout.JAVA_INT_UNALIGNED, 12)
                        + " ports of " + reply.get(ValueLayout.JAVA_INT_UNALIGNED, 16) + " bytes, this process "
                        + config.ports() + " of " + config.packetSize() + " (" + PORTS_KEY + ", returnSlotBytes)"
                        : status == STATUS_FENCED ? "it declared this rank failed (fenced)" : "no such worker"));
            }
            return MailboxChannels.client(link, regions, RemoteRegion.decode(reply, 24), config);
        } catch (RuntimeException e) {
            regions[0].close();
            regions[1].close();
            throw e;
        }
    }

    /** On the service thread: allocates the server side for a caller process and adds it to the worker's list. */
    private void serveOpen(Link from, int type, MemorySegment request) {
        if (request.byteSize() != OPEN_LENGTH) {
            throw new MailboxException("malformed mailbox OPEN of " + request.byteSize() + " bytes");
        }
        long requestId = request.get(ValueLayout.JAVA_LONG_UNALIGNED, 0);
        int callerRank = request.get(ValueLayout.JAVA_INT_UNALIGNED, 8);
        int worker = request.get(ValueLayout.JAVA_INT_UNALIGNED, 12);
        int ports = request.get(ValueLayout.JAVA_INT_UNALIGNED, 16);
        int packet = request.get(ValueLayout.JAVA_INT_UNALIGNED, 20);
        int status = STATUS_OK;
        LocalRegion[] regions = null;
        if (worker < 0 || worker >= threads) {
            status = STATUS_NO_WORKER;
        } else if (ports != config.ports() || packet != config.packetSize()) {
            status = STATUS_MISMATCH;
        } else if (!callerAlive(callerRank)) {
            status = STATUS_FENCED; // the job declared the caller failed: none of its calls run here
        } else {
            regions = MailboxChannels.allocate(transport, config);
            MailboxServer server = MailboxChannels.server(from, regions, RemoteRegion.decode(request, 24), config);
            served[worker].add(new Served(server, callerRank));
            if (!callerAlive(callerRank)) { // declared failed meanwhile: peerFailed may have missed it
                peerFailed(callerRank);
            }
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment reply = arena.allocate(OPENED_LENGTH, 8);
            reply.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, requestId);
            reply.set(ValueLayout.JAVA_INT_UNALIGNED, 8, status);
            reply.set(ValueLayout.JAVA_INT_UNALIGNED, 12, config.ports());
            reply.set(ValueLayout.JAVA_INT_UNALIGNED, 16, config.packetSize());
            if (regions != null) {
                regions[0].remote().encode(reply, 24);
            }
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (!from.send(OPENED, reply, 0, OPENED_LENGTH)) {
                from.checkAlive();
                if (System.nanoTime() - deadline > 0) {
                    throw new MailboxException("the service queue of endpoint " + Long.toHexString(from.peerId())
                            + " stayed full for 10 s: mailbox OPENED dropped");
                }
                LockSupport.parkNanos(10_000);
            }
        }
    }

    /** A failed process calls no more: its servers leave the workers' lists (their regions go at close). */
    void peerFailed(int failedRank) {
        for (List<Served> list : served) {
            list.removeIf(s -> s.callerRank() == failedRank && failedRank != rank);
        }
    }

    @Override
    public void close() {
        for (MailboxClient client : allClients) {
            client.close();
        }
        for (List<Served> list : served) {
            list.forEach(s -> s.server().close());
        }
    }

    private static int intSetting(Map<String, String> settings, String key, int fallback) {
        return (int) longSetting(settings, key, fallback);
    }

    private static long longSetting(Map<String, String> settings, String key, long fallback) {
        String value = settings.get(key);
        if (value == null || value.isBlank()) {
            return fallback;
        }
        try {
            return Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be a number, got '" + value + "'");
        }
    }
}
