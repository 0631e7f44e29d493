package io.fabricrpc.messaging;

import io.fabricrpc.api.FullPolicy;
import io.fabricrpc.api.MessagingException;
import io.fabricrpc.api.MessengerConfig;

import io.fabricrpc.counters.CounterRegistry;
import io.fabricrpc.counters.CounterSet;
import io.fabricrpc.counters.CounterTypes;
import io.fabricrpc.transport.EndpointAddress;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.transport.Transport;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * A process's messaging endpoint: creates {@link Messenger}s for its sending threads, registers its receiving
 * threads, and serves chunk allocation for remote senders on its {@link ServiceDispatcher} thread.
 * Thread-safe.
 */
public final class MessagingNode implements AutoCloseable {
    /** Notification slots start on cache lines so receivers pushing to different messengers do not collide. */
    private static final int NOTIFY_STRIDE = (ChunkLayout.NOTIFY_LENGTH + 63) & -64;
    private static final int NOTIFY_SLOTS_PER_REGION = 64;

    private final Transport transport;
    private final ServiceDispatcher service;
    private final boolean ownsService;
    private final ConcurrentHashMap<Long, ReceivingThread> receivers = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<InboxKey, SenderInbox> inboxes = new ConcurrentHashMap<>();
    /** Ranks the job declared failed (a sender id's high half): their chunk requests are refused, inboxes fenced. */
    private final java.util.Set<Integer> fencedRanks = ConcurrentHashMap.newKeySet();
    private final List<LocalRegion> notifyRegions = new ArrayList<>();
    private LocalRegion notifyRegion;
    private int notifySlot = NOTIFY_SLOTS_PER_REGION;
    /** The fabric process's one background agent; this node's flags, held calls and queues are one of its duties. */
    private final SendingAgent agent;
    private final TransmitDuty duty = new TransmitDuty();
    /** Where messengers, inboxes and links put their counters (the fabric's counters file), or nowhere. */
    private volatile CounterRegistry counters = CounterRegistry.NONE;
    private final Set<Link> countedLinks = ConcurrentHashMap.newKeySet();

    private record InboxKey(long sender, long destination) {
    }

    /** Creates a node with its own service thread. */
    public MessagingNode(Transport transport) {
        this(new ServiceDispatcher(transport), true);
        service.start();
    }

    /** Creates a node on a service dispatcher shared with other services of the process. */
    public MessagingNode(ServiceDispatcher service) {
        this(service, false);
    }

    private MessagingNode(ServiceDispatcher service, boolean ownsService) {
        this.transport = service.transport();
        this.service = service;
        this.ownsService = ownsService;
        service.register(ChunkServiceMessages.CHUNK_REQUEST, this::serveChunkRequest);
        service.register(ChunkServiceMessages.CHUNK_REPLY, (from, type, payload) ->
                service.complete(payload.get(ValueLayout.JAVA_LONG_UNALIGNED, ChunkServiceMessages.REP_ID), payload));
        this.agent = new SendingAgent("fabricrpc-agent-" + Long.toHexString(transport.endpointId()));
        agent.add(duty);
    }

    public Transport transport() {
        return transport;
    }

    public ServiceDispatcher service() {
        return service;
    }

    /** The process's background agent, which layers above give their timer work to. */
    public SendingAgent agent() {
        return agent;
    }

    /** Messengers, inboxes and links made from now on register their counters here. */
    public void counters(CounterRegistry registry) {
        this.counters = registry;
    }

    IdleStrategy idleStrategy() {
        return new BackoffIdleStrategy(64, 16, 1_000, 100_000);
    }

    /** Registers a receiving thread; messengers aimed at {@code threadId} deliver to it. */
    public ReceivingThread registerReceiver(long threadId) {
        ReceivingThread thread = new ReceivingThread(threadId);
        if (receivers.putIfAbsent(threadId, thread) != null) {
            throw new IllegalStateException("receiving thread " + ThreadNames.of(threadId) + " is already registered");
        }
        return thread;
    }

    /**
     * The channel from {@code sender} to {@code destination} as {@code config} asks: a {@link Messenger}, or under
     * {@link FullPolicy#RETRY_ASYNC} an {@link AsyncQueueChannel} over a FAIL messenger.
     */
    public RecordChannel channel(long sender, long destination, EndpointAddress destinationProcess,
                                 MessengerConfig config) {
        if (config.fullPolicy() != FullPolicy.RETRY_ASYNC) {
            return messenger(sender, destination, destinationProcess, config);
        }
        return asyncQueue(messenger(sender, destination, destinationProcess, config.withFullPolicy(FullPolicy.FAIL)),
                config.asyncQueueLimitBytes());
    }

    /** RETRY_ASYNC over {@code messenger} (whose policy is FAIL), queueing at most {@code limitBytes}. */
    public AsyncQueueChannel asyncQueue(Messenger messenger, long limitBytes) {
        if (messenger.fullPolicy() != FullPolicy.FAIL) {
            throw new IllegalArgumentException("an asynchronous queue needs a FAIL messenger, got " + messenger.fullPolicy());
        }
        AsyncQueueChannel channel = new AsyncQueueChannel(messenger, this, limitBytes);
        messenger.counters().bindAsyncQueueBytes(channel::loQueuedBytes);
        return channel;
    }

    /**
     * Creates the messenger from {@code sender} (a thread of this process) to {@code destination} (a thread of
     * the process at {@code destinationProcess}). Chunks are obtained on its first send. Not RETRY_ASYNC: see
     * {@link #channel}.
     */
    public Messenger messenger(long sender, long destination, EndpointAddress destinationProcess,
                               MessengerConfig config) {
        Link link = transport.connect(destinationProcess);
        LocalRegion region;
        long offset;
        synchronized (notifyRegions) {
            if (notifySlot == NOTIFY_SLOTS_PER_REGION) {
                notifyRegion = transport.allocate((long) NOTIFY_STRIDE * NOTIFY_SLOTS_PER_REGION, RemoteAccess.WRITE);
                notifyRegions.add(notifyRegion);
                notifySlot = 0;
            }
            region = notifyRegion;
            offset = (long) NOTIFY_STRIDE * notifySlot++;
        }
        Messenger messenger = new Messenger(this, link, sender, destination, config, region, offset);
        CounterRegistry registry = counters;
        registry.register(messenger.counters());
        if (link.statistics() != null && countedLinks.add(link)) {
            var statistics = link.statistics();
            String peer = " link -> rank " + (destination >>> 32);
            registry.register(new CounterSet(
                    new CounterSet.Counter("writes posted" + peer, CounterTypes.WRITES_POSTED, statistics::loWritesPosted),
                    new CounterSet.Counter("signaled completions" + peer, CounterTypes.SIGNALED_COMPLETIONS,
                            statistics::loSignaledCompletions),
                    new CounterSet.Counter("completion errors" + peer, CounterTypes.COMPLETION_ERRORS,
                            statistics::loCompletionErrors)));
        }
        return messenger;
    }

    /** The no-setup service call for chunks; waits (bounded) for the reply. */
    RemoteRegion[] requestChunks(Link link, long sender, long destination, int count, int chunkSize,
                                 RemoteRegion notify, long notifyOffset, Duration timeout) {
        long requestId = service.newRequest();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment request = arena.allocate(ChunkServiceMessages.REQUEST_LENGTH);
            request.set(ValueLayout.JAVA_LONG, ChunkServiceMessages.REQ_ID, requestId);
            request.set(ValueLayout.JAVA_LONG, ChunkServiceMessages.REQ_SENDER, sender);
            request.set(ValueLayout.JAVA_LONG, ChunkServiceMessages.REQ_DEST, destination);
            request.set(ValueLayout.JAVA_INT, ChunkServiceMessages.REQ_COUNT, count);
            request.set(ValueLayout.JAVA_INT, ChunkServiceMessages.REQ_CHUNK_SIZE, chunkSize);
            notify.encode(request, ChunkServiceMessages.REQ_NOTIFY_REGION);
            request.set(ValueLayout.JAVA_LONG, ChunkServiceMessages.REQ_NOTIFY_OFFSET, notifyOffset);
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!link.send(ChunkServiceMessages.CHUNK_REQUEST, request, 0, ChunkServiceMessages.REQUEST_LENGTH)) {
                link.checkAlive();
                if (System.nanoTime() - deadline > 0) {
                    throw new MessagingException("the service queue of endpoint " + Long.toHexString(link.peerId())
                            + " stayed full for " + timeout.toMillis() + " ms");
                }
                LockSupport.parkNanos(10_000);
            }
        }
        byte[] reply = service.await(requestId, link, timeout.toNanos(),
                "a request for " + count + " chunks for thread " + ThreadNames.of(destination));
        MemorySegment segment = MemorySegment.ofArray(reply);
        int status = ChunkServiceMessages.replyStatus(segment);
        if (status == ChunkServiceMessages.STATUS_FENCED) {
            // The peer heard the job declare this process failed: fail-stop towards it, whatever this process knows.
            String why = "it refused chunks for thread " + ThreadNames.of(destination) + " because the job declared"
                    + " this process failed (fenced)";
            link.fence(why);
            throw new io.fabricrpc.api.PeerFailedException("endpoint " + Long.toHexString(link.peerId()), why);
        }
        if (status != ChunkServiceMessages.STATUS_OK) {
            throw new MessagingException("endpoint " + Long.toHexString(link.peerId()) + " refused " + count
                    + " chunks of " + chunkSize + " bytes from thread " + ThreadNames.of(sender) + " for thread "
                    + ThreadNames.of(destination) + ": " + ChunkServiceMessages.status(status));
        }
        return ChunkServiceMessages.replyChunks(segment, count);
    }

    /** Runs on the service thread: allocates chunks in this process and files them for the destination thread. */
    private void serveChunkRequest(Link from, int type, MemorySegment request) {
        long requestId = request.byteSize() >= 8 ? request.get(ValueLayout.JAVA_LONG_UNALIGNED, ChunkServiceMessages.REQ_ID) : -1;
        int status = ChunkServiceMessages.STATUS_OK;
        List<LocalRegion> chunks = new ArrayList<>();
        if (!ChunkServiceMessages.wellFormedRequest(request)) { // before allocating: a corrupt one leaked chunks
            status = ChunkServiceMessages.STATUS_MALFORMED;
        } else {
            long sender = request.get(ValueLayout.JAVA_LONG_UNALIGNED, ChunkServiceMessages.REQ_SENDER);
            long destination = request.get(ValueLayout.JAVA_LONG_UNALIGNED, ChunkServiceMessages.REQ_DEST);
            int count = request.get(ValueLayout.JAVA_INT_UNALIGNED, ChunkServiceMessages.REQ_COUNT);
            int chunkSize = request.get(ValueLayout.JAVA_INT_UNALIGNED, ChunkServiceMessages.REQ_CHUNK_SIZE);
            ReceivingThread receiver = receivers.get(destination);
            SenderInbox existing = inboxes.get(new InboxKey(sender, destination));
            if (count < 1 || count > ChunkServiceMessages.MAX_CHUNKS_PER_REQUEST || chunkSize < ChunkLayout.MIN_CHUNK_SIZE
                    || chunkSize > ChunkLayout.MAX_CHUNK_SIZE || chunkSize % 64 != 0
                    || (existing != null && existing.chunkSize != chunkSize)) {
                status = ChunkServiceMessages.STATUS_MALFORMED;
            } else if (receiver == null) {
                status = ChunkServiceMessages.STATUS_NO_SUCH_THREAD;
            } else if (isFenced(sender)) {
                status = ChunkServiceMessages.STATUS_FENCED;
            } else if (existing != null && existing.grantedChunks + count > ChunkServiceMessages.MAX_CHUNKS_PER_INBOX) {
                status = ChunkServiceMessages.STATUS_OVER_LIMIT; // a sender's ring never grows past c_max <= 255
            } else {
                try {
                    for (int i = 0; i < count; i++) {
                        chunks.add(transport.allocate(chunkSize, RemoteAccess.WRITE));
                    }
                } catch (RuntimeException e) {
                    chunks.forEach(LocalRegion::close);
                    chunks.clear();
                    status = e instanceof io.fabricrpc.api.OutOfSpaceException ? ChunkServiceMessages.STATUS_NO_SPACE
                            : ChunkServiceMessages.STATUS_ALLOCATION_FAILED;
                }
                if (status == ChunkServiceMessages.STATUS_OK) {
                    status = fileChunks(from, request, sender, destination, chunkSize, receiver, chunks);
                }
            }
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment reply = arena.allocate(ChunkServiceMessages.replyLength(chunks.size()));
            reply.set(ValueLayout.JAVA_LONG, ChunkServiceMessages.REP_ID, requestId);
            reply.set(ValueLayout.JAVA_INT, ChunkServiceMessages.REP_STATUS, status);
            reply.set(ValueLayout.JAVA_INT, ChunkServiceMessages.REP_COUNT, chunks.size());
            for (int i = 0; i < chunks.size(); i++) {
                chunks.get(i).remote().encode(reply, ChunkServiceMessages.REP_REGIONS + (long) i * RemoteRegion.ENCODED_LENGTH);
            }
            while (!from.send(ChunkServiceMessages.CHUNK_REPLY, reply, 0, (int) reply.byteSize())) {
                from.checkAlive();
                LockSupport.parkNanos(10_000);
            }
        }
    }

    /** Service thread: files granted chunks with the sender's inbox, creating it on the first grant. */
    private int fileChunks(Link from, MemorySegment request, long sender, long destination, int chunkSize,
                           ReceivingThread receiver, List<LocalRegion> chunks) {
        InboxKey key = new InboxKey(sender, destination);
        SenderInbox inbox = inboxes.get(key);
        if (inbox != null) {
            inbox.grantedChunks += chunks.size();
            inbox.grown.addAll(chunks); // in allocation order, before the reply lets the sender seal
            return ChunkServiceMessages.STATUS_OK;
        }
        RemoteRegion notify = RemoteRegion.decode(request, ChunkServiceMessages.REQ_NOTIFY_REGION);
        long notifyOffset = request.get(ValueLayout.JAVA_LONG_UNALIGNED, ChunkServiceMessages.REQ_NOTIFY_OFFSET);
        try {
            inbox = new SenderInbox(sender, destination, from, notify, notifyOffset, chunkSize, chunks);
        } catch (RuntimeException e) { // a notification slot outside its region: refused, not left unanswered
            chunks.forEach(LocalRegion::close);
            chunks.clear();
            return ChunkServiceMessages.STATUS_MALFORMED;
        }
        inboxes.put(key, inbox);
        if (isFenced(sender)) { // fenced meanwhile: fence() may have missed it
            inbox.fence("the job declared rank " + (sender >>> 32) + " failed");
        }
        counters.register(new InboxCounters(inbox, sender, destination));
        receiver.arrivals.add(inbox); // the destination thread picks it up at its next poll
        return ChunkServiceMessages.STATUS_OK;
    }

    /**
     * Fencing: the job declared process {@code rank} failed. Inboxes of its threads (sender ids whose high half is the
     * rank) stop running calls, each reported once to its destination's error listener, and its chunk requests are
     * refused from now on. Any thread; idempotent.
     */
    public void fence(int rank, String reason) {
        fencedRanks.add(rank);
        for (SenderInbox inbox : inboxes.values()) {
            if (inbox.sender() >>> 32 == rank) {
                inbox.fence(reason);
            }
        }
    }

    /** Whether the process of sender thread {@code sender} was declared failed. */
    public boolean isFenced(long sender) {
        return !fencedRanks.isEmpty() && fencedRanks.contains((int) (sender >>> 32));
    }

    /**
     * A sender left something pending (a flag, held calls) in {@code messenger}: the agent watches it from the first
     * time on ({@code watched} false), and is woken if asleep afterwards. Returns true: the messenger is watched.
     */
    boolean watchOrWake(Messenger messenger, boolean watched) {
        java.lang.invoke.VarHandle.fullFence(); // Dekker with the agent's sleep (IdleHandshake): pending store, then load
        if (watched) {
            agent.wake();
        } else {
            watchDeferred(messenger); // once per messenger: the agent bounds how long records wait
        }
        return true;
    }

    /** The agent watches what {@code messenger} leaves pending (flags, held calls) from now on. */
    void watchDeferred(Messenger messenger) {
        duty.watch(messenger);
        agent.wake();
    }

    void unwatchDeferred(Messenger messenger) {
        duty.unwatch(messenger);
    }

    /** A sender left something pending, after the volatile store that publishes it: wakes a parked agent (cheap). */
    void wakeAgentIfAsleep() {
        agent.wake();
    }

    /** Registers a channel whose RETRY_ASYNC queue the agent should drain. */
    void flushLater(AsyncQueueChannel channel) {
        duty.flushLater(channel); // a volatile store (the queue's) before the wake-up's volatile load
        agent.wake();
    }

    void unflushLater(AsyncQueueChannel channel) {
        duty.unflushLater(channel);
    }

    @Override
    public void close() {
        duty.clear();
        agent.close();
        if (ownsService) {
            service.close();
        }
        receivers.values().forEach(ReceivingThread::close);
        synchronized (notifyRegions) {
            notifyRegions.forEach(LocalRegion::close);
        }
    }
}
