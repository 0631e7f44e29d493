package io.fabricrpc.invocation;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.RemoteBufferConsumer;
import io.fabricrpc.api.ContextCalls;
import io.fabricrpc.api.RemoteContextConsumer;
import io.fabricrpc.api.RemoteContextFunction;
import io.fabricrpc.api.RemoteRunnable;
import io.fabricrpc.api.RemoteSupplier;
import io.fabricrpc.api.Synchronizer;
import io.fabricrpc.fabric.ControlPlane;
import io.fabricrpc.fabric.ControlPlaneListener;
import io.fabricrpc.fabric.Membership;
import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.memory.RemoteAllocationService;
import io.fabricrpc.messaging.ChunkLayout;
import io.fabricrpc.api.FullPolicy;
import io.fabricrpc.messaging.Messenger;
import io.fabricrpc.api.MessagingException;
import io.fabricrpc.messaging.MessagingNode;
import io.fabricrpc.messaging.ReceivingThread;
import io.fabricrpc.messaging.RecordChannel;
import io.fabricrpc.api.MessengerConfig;
import io.fabricrpc.serialization.CallEncoder;
import io.fabricrpc.api.SerializationRegistry;
import io.fabricrpc.transport.CounterSlot;
import io.fabricrpc.transport.EndpointAddress;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.transport.Transport;
import io.fabricrpc.transport.Transports;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import java.io.Serializable;
import java.lang.foreign.Arena;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import java.util.function.IntFunction;

/**
 * The {@link Fabric} of one process: the control plane (bootstrap, liveness), one transport endpoint, the
 * messaging node (messengers, chunk service), per-thread sending state, and the workers' receivers.
 */
public final class FabricRuntime implements Fabric {
    private static final String REGISTRY_DESCRIPTOR = "registry";

    private final FabricConfig config;
    private final SerializationRegistry registry;
    private final Transport transport;
    private final MessagingNode node;
    /** The counters file's publisher (a duty of the node's agent), or null when counters are off. */
    private final io.fabricrpc.counters.CountersPublisher counters;
    private final RemoteAllocationService remoteMemory;
    private final ControlPlane control;
    private final int rank;
    private final int size;
    private final int threads;
    private final EndpointAddress[] addresses;
    private final Link[] links;
    private final ReceivingThread[] receiving;
    private final AtomicReferenceArray<Thread> attached;
    private final ConcurrentHashMap<Long, LocalRegion> regions = new ConcurrentHashMap<>();
    private final MailboxChannelSet mailboxes;
    private final ReturnCalls returns;
    private final ThreadLocal<ThreadContext> contexts = new ThreadLocal<>();
    /*
     * The contexts again, direct-mapped by thread id: a thread finds its own in three dependent loads where the
     * ThreadLocal probe takes eight, and the call path is a chain of such loads (measured). A slot holds a context
     * of the thread it names only; it is claimed by CAS when empty or when its thread has ended, and then changes
     * only by its own thread (attach). Other threads read it only to compare its final `thread` field. A thread
     * whose slot a live thread holds keeps using the ThreadLocal.
     */
    static final int CONTEXT_SLOTS = 256;
    private static final VarHandle CONTEXT_SLOT = MethodHandles.arrayElementVarHandle(ThreadContext[].class);
    private final ThreadContext[] contextSlots = new ThreadContext[CONTEXT_SLOTS];
    private final List<ThreadContext> allContexts = new CopyOnWriteArrayList<>();
    private final AtomicInteger ephemeralThreads = new AtomicInteger();
    private final List<Thread> handlers = new CopyOnWriteArrayList<>();
    /** Send-based calls: the service thread moves each into its worker's queue (one producer, one consumer). */
    private final OneToOneRingBuffer[] sendQueues;
    private final MemorySegment[] sendQueueMemory;
    private final java.lang.foreign.Arena sendQueueArena = java.lang.foreign.Arena.ofShared();
    private final UnsafeBuffer routed = new UnsafeBuffer(0, 0);
    private volatile BiConsumer<ThreadId, Throwable> errorListener = (thread, error) ->
            System.getLogger("fabricrpc").log(System.Logger.Level.ERROR, "call from " + thread + " failed: " + error, error);
    private volatile boolean closed;
    /** View 0 is the plain messengers (null factory); others wrap them, e.g. aggregators. */
    private final CopyOnWriteArrayList<ChannelFactory> views = new CopyOnWriteArrayList<>(java.util.Collections.singletonList(null));
    static final int VIEW_SHIFT = 20;


    private FabricRuntime(FabricConfig config) {
        this.config = config;
        this.registry = config.registry();
        this.rank = config.job().rank();
        this.size = config.job().size();
        this.threads = config.job().threadsPerProcess();
        this.transport = Transports.open(config.transport());
        this.sendQueues = new OneToOneRingBuffer[threads];
        this.sendQueueMemory = new MemorySegment[threads];
        for (int i = 0; i < threads; i++) {
            int length = SEND_QUEUE_BYTES + RingBufferDescriptor.TRAILER_LENGTH;
            sendQueueMemory[i] = sendQueueArena.allocate(length, 64);
            sendQueues[i] = new OneToOneRingBuffer(new UnsafeBuffer(sendQueueMemory[i].address(), length));
        }
        MessagingNode messaging = null;
        ControlPlane plane = null;
        RemoteAllocationService remote = null;
        io.fabricrpc.counters.CountersPublisher publisher = null;
        try {
            messaging = new MessagingNode(transport);
            // Before anything is created, so every messenger, inbox and link registers its counters.
            publisher = io.fabricrpc.counters.CountersPublisher.open(config.transport(), rank,
                    config.job().coordinatorHost() + ":" + config.job().coordinatorPort());
            if (publisher != null) {
                messaging.counters(publisher);
                messaging.agent().add(publisher::publishIfDue);
            }
            // Before joining, like every handler: a peer may make a send-based call as soon as the job is formed.
            messaging.service().register(SEND_CALL_MESSAGE, this::routeSendCall);
            // Before joining: once the job is formed, peers may ask for memory at once.
            remote = new RemoteAllocationService(messaging.service(), RemoteAllocationService.limitFrom(config.transport()),
                    this::allocate, this::releaseRegion);
            // Before joining too: callers open mailbox channels to our workers as soon as the job is formed.
            this.returns = new ReturnCalls(this, registry, config.callTimeout());
            this.mailboxes = new MailboxChannelSet(this, transport, messaging.service(), rank, size, threads,
                    config.returnSlotBytes(), config.callTimeout(), config.transport());
            this.receiving = new ReceivingThread[threads];
            for (int i = 0; i < threads; i++) {
                // Registered before joining: once the job is formed, peers may send at once.
                receiving[i] = messaging.registerReceiver(ThreadId.pack(rank, i));
                receiving[i].onError((sender, error) -> errorListener.accept(ThreadId.fromLong(sender), error));
            }
            byte[] fingerprint = ByteBuffer.allocate(8).putLong(registry.fingerprint()).array();
            plane = ControlPlane.startAndJoin(config.job(), Map.of(transport.kind(), transport.address().bytes(),
                    REGISTRY_DESCRIPTOR, fingerprint));
            Membership membership = plane.membership();
            this.addresses = new EndpointAddress[size];
            for (int r = 0; r < size; r++) {
                byte[] theirs = membership.descriptor(r, REGISTRY_DESCRIPTOR);
                if (theirs == null || !java.util.Arrays.equals(theirs, fingerprint)) {
                    throw new IllegalStateException("rank " + r + " built a different serialization registry (fingerprint "
                            + (theirs == null ? "missing" : Long.toHexString(ByteBuffer.wrap(theirs).getLong()))
                            + ", this rank " + Long.toHexString(registry.fingerprint())
                            + "): every process must register the same classes in the same order");
                }
                byte[] address = membership.descriptor(r, transport.kind());
                if (address == null) {
                    throw new IllegalStateException("rank " + r + " has no '" + transport.kind() + "' endpoint"
                            + " (fabric.transport must be the same in every process)");
                }
                addresses[r] = new EndpointAddress(transport.kind(), address);
            }
        } catch (RuntimeException e) {
            if (plane != null) {
                plane.close();
            }
            if (messaging != null) {
                messaging.close();
            }
            if (publisher != null) {
                publisher.file().close();
            }
            transport.close();
            throw e;
        }
        this.node = messaging;
        this.counters = publisher;
        if (publisher != null) {
            publisher.register(plane.counters());
        }
        this.remoteMemory = remote;
        this.control = plane;
        this.links = new Link[size];
        this.attached = new AtomicReferenceArray<>(threads);
        control.addListener(new ControlPlaneListener() {
            @Override
            public void peerFailed(int failedRank, PeerFailedException failure) {
                fence(failedRank, failure);
                returns.peerFailed(failedRank, failure);
                mailboxes.peerFailed(failedRank);
            }
        });
    }

    static final int SEND_CALL_MESSAGE = 0x4D490001;
    private static final int SEND_QUEUE_BYTES = 1 << 20;
    /** Send-based call message: | destination worker (4) | kind (4) | sender thread (8) | call record |. */
    private static final int SEND_HEADER = 16;

    public static FabricRuntime join(FabricConfig config) {
        io.fabricrpc.doctor.JoinChecks.verify(config); // fails early, naming the fix, before anything is set up
        // Installed while the join waits for its peers, in effect before the first call is compiled.
        var directives = JitDirectives.installOnce(config.transport());
        FabricRuntime runtime = new FabricRuntime(config);
        JitDirectives.await(directives);
        return runtime;
    }

    private static final ThreadLocal<FabricRuntime> CURRENT = new ThreadLocal<>();
    private static final ThreadLocal<Object> CURRENT_CONTEXT = new ThreadLocal<>();

    public static Object currentContext() {
        return CURRENT_CONTEXT.get();
    }

    public static FabricRuntime current() {
        return CURRENT.get();
    }

    // ---------------------------------------------------------------------------------------------------- identity

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public int threadsPerProcess() {
        return threads;
    }

    int threadCount() {
        return size * threads;
    }

    SerializationRegistry registry() {
        return registry;
    }

    Transport transport() {
        return transport;
    }

    MailboxChannelSet mailboxes() {
        return mailboxes;
    }

    ReturnCalls returnCalls() {
        return returns;
    }

    /**
     * Where a call to {@code global} made now must follow the calling thread's one-way calls to it: {messenger
     * channel id, records sent on it} after pushing them out ({0, 0} if it has none). The destination runs the call
     * only once it has consumed that many records of the channel.
     */
    long[] messengerOrder(ThreadContext context, int global) {
        ThreadContext.Route route = context.route(0, global);
        if (route == null) {
            return NO_ORDER;
        }
        RecordChannel channel = route.channel;
        if (channel.bufferedBytes() > 0) {
            channel.flush(); // the call depends on them: they must not sit in a batch
        }
        context.publishDeferredFlags();
        long sender = ThreadId.pack(rank, ThreadId.threadIndexOf(context.senderId));
        return new long[] {sender, channel.recordsSent()};
    }

    private static final long[] NO_ORDER = {0, 0};

    /** True if the calling thread runs a call as worker {@code dest} (so a call to dest cannot run now). */
    boolean waitingInOwnCall(ThreadId dest) {
        ThreadContext context = existingContext();
        return context != null && context.inProcessCalls && isSelf(context, dest);
    }

    /** The control plane (liveness, membership). */
    public ControlPlane controlPlane() {
        return control;
    }

    @Override
    public void attach(int index) {
        attach(index, null);
    }

    @Override
    public void attach(int index, Object userContext) {
        if (index < 0 || index >= threads) {
            throw new IllegalArgumentException("worker index " + index + " outside [0, " + threads + ")");
        }
        ThreadContext existing = contexts.get();
        if (existing != null && existing.workerIndex >= 0) {
            throw new IllegalStateException("this thread is already worker " + existing.workerIndex);
        }
        if (!attached.compareAndSet(index, null, Thread.currentThread())) {
            throw new IllegalStateException("worker " + index + " of rank " + rank + " is already attached to thread '"
                    + attached.get(index).getName() + "'");
        }
        ThreadContext context = new ThreadContext(this, ThreadId.pack(rank, index), threadCount());
        context.workerIndex = index;
        context.receiving = receiving[index];
        context.receiver = new CallReceiver(this, new ThreadId(rank, index), userContext);
        contexts.set(context);
        claimContextSlot(context);
        CURRENT.set(this);
        CURRENT_CONTEXT.set(userContext);
        allContexts.add(context);
    }

    @Override
    public ThreadId self() {
        ThreadContext context = contexts.get();
        if (context == null || context.workerIndex < 0) {
            throw new IllegalStateException("thread '" + Thread.currentThread().getName() + "' is not an attached worker");
        }
        return new ThreadId(rank, context.workerIndex);
    }

    /**
     * A view of this fabric whose one-sided call primitives go through channels made by {@code factory} (the
     * aggregation module's aggregators, for one; through {@link ChannelViews}). Up to
     * {@value ThreadContext#MAX_VIEWS} - 1 views per fabric.
     */
    synchronized Fabric view(ChannelFactory factory) {
        if (views.size() == ThreadContext.MAX_VIEWS) {
            throw new IllegalStateException("at most " + (ThreadContext.MAX_VIEWS - 1) + " views per fabric");
        }
        views.add(factory);
        return new FabricView(this, views.size() - 1);
    }

    /** The transport, for views that need memory the transport can send from (the overflow aggregator's). */
    Transport transportForViews() {
        return transport;
    }

    /** The process's one background agent: where layers above (aggregation) put their timer work. */
    io.fabricrpc.messaging.SendingAgent sendingAgent() {
        return node.agent();
    }

    ThreadContext threadContext() {
        return context();
    }

    /**
     * Flushes the calling thread's channels of {@code view} and sends each destination a one-way shutdown signal
     * behind the last call (Seriema's aggregator shutdown, as in its MCTS framework).
     */
    void shutdownView(int view) {
        for (ThreadContext.Route route : context().routesOf(view)) {
            route.channel.send(InvocationRecords.SHUTDOWN_SIGNAL, (target, offset, limit) -> limit >= 1 ? 1 : -1);
            route.channel.flush();
        }
    }

    /** Shutdown signals the calling worker has received so far. */
    public long shutdownSignalsReceived() {
        ThreadContext context = contexts.get();
        if (context == null || context.receiver == null) {
            throw new IllegalStateException("not an attached worker: " + Thread.currentThread().getName());
        }
        return context.receiver.shutdownSignals;
    }

    long bufferedBytes(int view) {
        long bytes = 0;
        for (ThreadContext.Route route : context().routesOf(view)) {
            bytes += route.channel.bufferedBytes();
        }
        return bytes;
    }

    /** Flushes the calling thread's channels of one view. */
    void flushView(int view) {
        for (ThreadContext.Route route : context().routesOf(view)) {
            route.channel.flush();
        }
    }

    /** The calling thread's sending state; threads that are not workers get an id past the workers'. */
    private ThreadContext context() {
        Thread thread = Thread.currentThread();
        ThreadContext context = contextSlots[contextSlot(thread)];
        return context != null && context.thread == thread ? context : contextSlow();
    }

    private ThreadContext contextSlow() {
        ThreadContext context = contexts.get();
        if (context == null) {
            if (closed) {
                throw new IllegalStateException("fabric of rank " + rank + " is closed");
            }
            int index = threads + ephemeralThreads.getAndIncrement();
            context = new ThreadContext(this, ThreadId.pack(rank, index), threadCount());
            contexts.set(context);
            allContexts.add(context);
        }
        claimContextSlot(context);
        return context;
    }

    /** The calling thread's context if it has one, else null (never creates one). */
    ThreadContext existingContext() {
        Thread thread = Thread.currentThread();
        ThreadContext context = contextSlots[contextSlot(thread)];
        return context != null && context.thread == thread ? context : contexts.get();
    }

    private static int contextSlot(Thread thread) {
        return (int) thread.threadId() & (CONTEXT_SLOTS - 1);
    }

    /** Puts the calling thread's {@code context} in its slot unless another live thread holds the slot. */
    private void claimContextSlot(ThreadContext context) {
        int slot = contextSlot(context.thread);
        ThreadContext holder = (ThreadContext) CONTEXT_SLOT.getAcquire(contextSlots, slot);
        if (holder == null || holder.thread == context.thread || !holder.thread.isAlive()) {
            // Volatile CAS: the context is fully built before its slot names it. Losing means another thread took it.
            CONTEXT_SLOT.compareAndSet(contextSlots, slot, holder, context);
        }
    }

    // ---------------------------------------------------------------------------------------------- receiving side

    @Override
    public int processCalls() {
        ThreadContext context = existingContext();
        if (context == null || context.receiving == null) {
            throw new IllegalStateException("processCalls on thread '" + Thread.currentThread().getName()
                    + "', which is not an attached worker (call attach(index) first)");
        }
        if (context.inProcessCalls) {
            return 0; // a call that waits must not re-enter its own receiver
        }
        context.inProcessCalls = true;
        try {
            int ran = context.receiving.processCalls(context.receiver);
            ran += sendQueues[context.workerIndex].read(context.receiver.sendQueueReader(
                    sendQueueMemory[context.workerIndex]), 64);
            return ran + returns.serve(context) + returns.sweep();
        } finally {
            context.inProcessCalls = false;
            // Calls sent before or by this round leave no flag waiting: one lone WRITE per round at most.
            context.publishDeferredFlags();
        }
    }

    /** Lets a waiting worker run its incoming calls (avoids deadlock between workers calling each other). */
    void help() {
        ThreadContext context = existingContext();
        if (context != null) {
            context.publishDeferredFlags(); // the awaited call may be the one whose flag waits
        }
        if (context != null && context.receiving != null && !context.inProcessCalls
                && context.nesting < ThreadContext.MAX_NESTING - 1) {
            context.nesting++; // calls run here may send: they prepare their records one level up
            // A wait inside a view's call (callReturn through an aggregator) must not lend that view to the calls
            // run here: their plain calls go through the plain channels.
            int view = context.enterView(0);
            try {
                processCalls();
            } finally {
                context.enterView(view);
                context.nesting--;
            }
        }
    }

    @Override
    public void startHandlerThreads() {
        for (int i = 0; i < threads; i++) {
            if (attached.get(i) != null) {
                continue;
            }
            int index = i;
            CompletableFuture<Void> ready = new CompletableFuture<>();
            Thread handler = Thread.ofPlatform().daemon().name("fabricrpc-handler-" + rank + "." + i).start(() -> {
                try {
                    attach(index);
                    ready.complete(null);
                } catch (RuntimeException e) {
                    ready.complete(null); // a user thread attached meanwhile: it serves this worker
                    return;
                }
                IdleStrategy idle = new BackoffIdleStrategy(100, 10, 1_000, 200_000);
                while (!closed) {
                    try {
                        idle.idle(processCalls());
                    } catch (Throwable e) {
                        errorListener.accept(new ThreadId(rank, index), e); // reported; the handler lives on
                    }
                }
            });
            handlers.add(handler);
            ready.join();
        }
    }

    /** The barrier coordinator's state: rank 0 only, touched by worker (0, 0)'s thread only. */
    private Collectives.Gathering gathering;

    Collectives.Gathering gathering() {
        if (gathering == null && rank == 0) {
            gathering = new Collectives.Gathering();
        }
        return gathering;
    }

    @Override
    public <C> ContextCalls<C> context(Class<C> type) {
        return new TypedContextCalls<>(this, this, type);
    }

    @Override
    public void barrier() {
        barrier(config.callTimeout());
    }

    @Override
    public void barrier(Duration timeout) {
        Collectives.allReduceSum(this, context(), 0, timeout, "barrier");
    }

    @Override
    public long allReduceSum(long value) {
        return Collectives.allReduceSum(this, context(), value, config.callTimeout(), "allReduceSum");
    }

    void reportError(long sender, Throwable error) {
        errorListener.accept(ThreadId.fromLong(sender), error);
    }

    @Override
    public void onError(BiConsumer<ThreadId, Throwable> listener) {
        this.errorListener = listener;
    }

    // ------------------------------------------------------------------------------------------------ sending side

    Link link(int destinationRank) {
        Link link = links[destinationRank];
        if (link == null) {
            link = transport.connect(addresses[destinationRank]); // idempotent per peer; the race is benign
            links[destinationRank] = link;
            if (!control.isAlive(destinationRank)) { // declared failed meanwhile: fence() may have missed this link
                link.fence("the job declared rank " + destinationRank + " failed");
            }
        }
        return link;
    }

    /**
     * Fencing: the control plane's verdict reaches the data plane. Sends to the rank fail from now on (its link is
     * fenced), and calls from its threads are no longer run here (their inboxes and send-based calls are refused).
     */
    private void fence(int failedRank, PeerFailedException failure) {
        String reason = "the job declared rank " + failedRank + " failed: " + failure.getMessage();
        node.fence(failedRank, reason);
        try {
            link(failedRank).fence(reason); // the messengers' link too: connect returns the transport's one per peer
        } catch (RuntimeException unreachable) {
            // No link can be made to it: nothing can be sent there either.
        }
    }

    void checkAlive(int destinationRank) {
        control.checkAlive(destinationRank);
        Link link = links[destinationRank];
        if (link != null) {
            link.checkAlive();
        }
    }

    private int globalIndex(ThreadId dest) {
        if (dest.rank() < 0 || dest.rank() >= size || dest.threadIndex() < 0 || dest.threadIndex() >= threads) {
            throw new IllegalArgumentException("no worker " + dest + " in a job of " + size + " processes x " + threads
                    + " threads");
        }
        return dest.rank() * threads + dest.threadIndex();
    }

    /** The calling thread's route to {@code global} in its current view, created on first use. */
    private ThreadContext.Route route(ThreadContext context, int global) {
        ThreadContext.Route route = context.route(global);
        return route != null ? route : newRoute(context, context.view(), global);
    }

    /** The calling thread's route to {@code global} in {@code view}, created on first use. */
    private ThreadContext.Route route(ThreadContext context, int view, int global) {
        ThreadContext.Route route = context.route(view, global);
        return route != null ? route : newRoute(context, view, global);
    }

    private ThreadContext.Route newRoute(ThreadContext context, int view, int global) {
        int destRank = global / threads;
        control.checkAlive(destRank);
        ChannelFactory factory = views.get(view);
        // Each view is its own channel, so its sender id is distinct: the receiver keeps one inbox per sender.
        long sender = ThreadId.pack(rank, ThreadId.threadIndexOf(context.senderId) | view << VIEW_SHIFT);
        MessengerConfig messengerConfig = factory == null ? config.messenger() : factory.messengerConfig(config.messenger());
        // RETRY_ASYNC is a channel over a FAIL messenger; views choose their own policy (messengerConfig).
        boolean async = messengerConfig.fullPolicy() == FullPolicy.RETRY_ASYNC;
        Messenger messenger = node.messenger(sender, ThreadId.pack(destRank, global % threads), addresses[destRank],
                async ? messengerConfig.withFullPolicy(FullPolicy.FAIL) : messengerConfig);
        messenger.whileWaiting(this::help);
        RecordChannel plain = async ? node.asyncQueue(messenger, messengerConfig.asyncQueueLimitBytes()) : messenger;
        RecordChannel channel = factory == null ? plain : factory.wrap(messenger);
        io.fabricrpc.counters.CounterSource layer = counters != null && channel != plain ? channel.counters() : null;
        if (layer != null) {
            counters.register(layer); // a view's layer: an aggregator's batches and flushes
        }
        CallEncoder encoder = new CallEncoder(registry, ThreadId.fromLong(sender) + " -> "
                + ThreadId.fromLong(ThreadId.pack(destRank, global % threads)));
        ThreadContext.Route route = new ThreadContext.Route(channel, encoder,
                new ChannelTarget(this, channel, destRank, false), new ChannelTarget(this, channel, destRank, true));
        context.setRoute(view, global, route);
        return route;
    }


    /** Sends the record {@code writer} holds through {@code route} and registers it with {@code sync}. */
    private static boolean send(ThreadContext.Route route, ThreadContext.CallWriter writer, int kind, Synchronizer sync) {
        RecordChannel channel = route.channel;
        int tag = sync != null && sync.mode() == Synchronizer.Mode.CONSUMED ? kind | ChunkLayout.TAG_NOTIFY : kind;
        // One call site of the direct channel's send (a messenger) serves plain messengers and ovfl's direct path
        // alike, so both take the same inlined path; the layers' own send runs only to batch or park a call.
        RecordChannel direct = route.direct;
        boolean sent = direct != null && direct.send(tag, writer) || direct != channel && channel.send(tag, writer);
        if (sync == null) {
            return sent;
        }
        boolean consumed = sync.mode() == Synchronizer.Mode.CONSUMED;
        if (sent) {
            if (consumed) {
                sync.add(route.consumed, channel.recordsSent());
            } else {
                sync.add(route.sent, channel.lastTicket());
            }
        }
        return sent;
    }

    /** Prepares the calling thread's writer for a call of {@code function} through {@code route}. */
    private static ThreadContext.CallWriter prepare(ThreadContext context, ThreadContext.Route route,
                                                    Serializable function) {
        ThreadContext.CallWriter writer = context.writer();
        // Here, in a force-inlined method (root pom), so that the lambda can stay in the caller's registers:
        // nothing but the capture reads it (CapturedCall).
        writer.call.capture(function);
        writer.prepare(route.encoder);
        context.markSent(route);
        return writer;
    }

    /**
     * {@link #call(ThreadId, RemoteRunnable, Synchronizer)} through {@code view}'s channels (a {@link FabricView}).
     * The view goes with the call instead of being switched on the context: nothing to restore, no stores.
     */
    boolean callInView(int view, ThreadId dest, Serializable function, Synchronizer sync) {
        ThreadContext context = context();
        ThreadContext.Route route = route(context, view, globalIndex(dest));
        return send(route, prepare(context, route, function), InvocationRecords.CALL, sync);
    }

    @Override
    public boolean call(ThreadId dest, RemoteRunnable function) {
        return call(dest, function, null);
    }

    @Override
    public boolean call(ThreadId dest, RemoteRunnable function, Synchronizer sync) {
        ThreadContext context = context();
        ThreadContext.Route route = route(context, globalIndex(dest));
        return send(route, prepare(context, route, function), InvocationRecords.CALL, sync);
    }

    @Override
    public boolean call(ThreadId dest, RemoteContextConsumer<?> function, Synchronizer sync) {
        ThreadContext context = context();
        ThreadContext.Route route = route(context, globalIndex(dest));
        return send(route, prepare(context, route, function), InvocationRecords.CALL, sync);
    }

    @Override
    public boolean callSend(ThreadId dest, RemoteRunnable function) {
        return sendBased(dest, function);
    }

    @Override
    public boolean callSend(ThreadId dest, RemoteContextConsumer<?> function) {
        return sendBased(dest, function);
    }

    /** Seriema's send-based call: one two-sided message, no buffers negotiated, routed by the service thread. */
    private boolean sendBased(ThreadId dest, Serializable function) {
        int global = globalIndex(dest);
        ThreadContext context = context();
        CallEncoder encoder = context.sendEncoders[global];
        if (encoder == null) {
            encoder = new CallEncoder(registry, ThreadId.fromLong(context.senderId) + " => " + dest);
            context.sendEncoders[global] = encoder;
        }
        if (context.sendStaging == null) {
            // Native, as every other segment calls are encoded into: a heap one would make the JIT's profile of the
            // shared capture writers polymorphic, and every call path would take the slow segment access.
            context.sendStaging = Arena.ofAuto().allocate(transport.maxMessageSize(), Long.BYTES);
        }
        MemorySegment staging = context.sendStaging;
        int length = encoder.encode(function, staging, SEND_HEADER, staging.byteSize());
        if (length < 0) {
            throw new MessagingException("send-based call of more than " + (staging.byteSize() - SEND_HEADER)
                    + " bytes does not fit one transport message (" + transport.maxMessageSize() + " bytes)");
        }
        staging.set(ValueLayout.JAVA_INT_UNALIGNED, 0, dest.threadIndex());
        staging.set(ValueLayout.JAVA_INT_UNALIGNED, 4, InvocationRecords.CALL);
        staging.set(ValueLayout.JAVA_LONG_UNALIGNED, 8, context.senderId);
        Link link = link(dest.rank());
        // The record is encoded (its definition counted as sent): it must go out, so a full queue is waited out.
        long start = 0;
        while (!link.send(SEND_CALL_MESSAGE, staging, 0, SEND_HEADER + length)) {
            if (start == 0) {
                start = System.nanoTime();
            }
            checkAlive(dest.rank());
            if (System.nanoTime() - start > config.callTimeout().toNanos()) {
                throw new MessagingException("the message queue of rank " + dest.rank() + " stayed full for "
                        + config.callTimeout().toMillis() + " ms");
            }
            help();
            Thread.onSpinWait();
        }
        return true;
    }

    /** Service thread: moves a send-based call into its worker's queue, waiting while that queue is full. */
    private void routeSendCall(Link from, int type, MemorySegment payload) {
        int worker = payload.get(ValueLayout.JAVA_INT_UNALIGNED, 0);
        int kind = payload.get(ValueLayout.JAVA_INT_UNALIGNED, 4);
        if (worker < 0 || worker >= threads || kind <= 0 || payload.byteSize() <= SEND_HEADER) {
            throw new IllegalArgumentException("malformed send-based call for worker " + worker + ", kind " + kind
                    + ", " + payload.byteSize() + " bytes from endpoint " + Long.toHexString(from.peerId()));
        }
        if (node.isFenced(payload.get(ValueLayout.JAVA_LONG_UNALIGNED, 8))) {
            return; // from a rank the job declared failed: never run
        }
        routed.wrap(payload.address() + 8, (int) payload.byteSize() - 8); // | sender | call record |
        while (!sendQueues[worker].write(kind, routed, 0, routed.capacity())) {
            if (closed) {
                return;
            }
            LockSupport.parkNanos(10_000);
        }
    }

    @Override
    public boolean callBuffer(ThreadId dest, RemoteBufferConsumer function, MemorySegment buffer, long offset,
                              long length, Synchronizer sync) {
        ThreadContext context = context();
        ThreadContext.Route route = route(context, globalIndex(dest));
        ThreadContext.CallWriter writer = prepare(context, route, function);
        writer.trailer = buffer;
        writer.trailerOffset = offset;
        writer.trailerLength = length;
        return send(route, writer, InvocationRecords.CALL_BUFFER, sync);
    }

    @Override
    public boolean callBuffer(ThreadId dest, RemoteBufferConsumer function, LocalRegion source, long sourceOffset,
                              RemoteRegion destination, long destinationOffset, long length, Synchronizer sync) {
        int global = globalIndex(dest);
        Link link = link(dest.rank());
        // Same link as the call record, issued first: the receiver sees the bytes before it runs the call.
        long ticket = link.write(source, sourceOffset, destination, destinationOffset, length);
        ThreadContext context = context();
        ThreadContext.Route route = route(context, global);
        ThreadContext.CallWriter writer = prepare(context, route, function);
        MemorySegment header = writer.header;
        header.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, destination.regionId());
        header.set(ValueLayout.JAVA_LONG_UNALIGNED, 8, destinationOffset);
        header.set(ValueLayout.JAVA_LONG_UNALIGNED, 16, length);
        writer.headerLength = 24;
        boolean sent = send(route, writer, InvocationRecords.CALL_BUFFER_WRITTEN,
                sync != null && sync.mode() == Synchronizer.Mode.CONSUMED ? sync : null);
        if (sent && sync != null && sync.mode() == Synchronizer.Mode.SENT) {
            sync.add(route.sent, ticket); // the source buffer, not the record, is what matters
        }
        return sent;
    }

    @Override
    public boolean callBuffer(ThreadId dest, RemoteBufferConsumer function, RemoteRegion source, long offset,
                              long length, Synchronizer sync) {
        ThreadContext context = context();
        ThreadContext.Route route = route(context, globalIndex(dest));
        ThreadContext.CallWriter writer = prepare(context, route, function);
        MemorySegment header = writer.header;
        source.encode(header, 0);
        header.set(ValueLayout.JAVA_LONG_UNALIGNED, RemoteRegion.ENCODED_LENGTH, offset);
        header.set(ValueLayout.JAVA_LONG_UNALIGNED, RemoteRegion.ENCODED_LENGTH + 8, length);
        writer.headerLength = RemoteRegion.ENCODED_LENGTH + 16;
        return send(route, writer, InvocationRecords.CALL_BUFFER_READ, sync);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <R> R callReturn(ThreadId dest, RemoteSupplier<R> function) {
        return (R) callReturnOf(dest, function);
    }

    /** {@link #callReturn} of a function of the destination's context ({@link ContextCalls#callReturn}). */
    @SuppressWarnings("unchecked")
    <R> R callReturnInContext(ThreadId dest, RemoteContextFunction<?, R> function) {
        return (R) callReturnOf(dest, function);
    }

    private Object callReturnOf(ThreadId dest, Serializable function) {
        int global = globalIndex(dest);
        ThreadContext context = context();
        if (context.inProcessCalls && isSelf(context, dest)) {
            throw new IllegalStateException("callReturn from a call run by worker " + dest + " to " + dest
                    + " itself: that call could run only after the current one returns (use callReturnAsync)");
        }
        return returns.call(context, global, dest, function);
    }

    /** True if {@code dest} is the worker the calling thread is attached as. */
    boolean isSelf(ThreadContext context, ThreadId dest) {
        return context.workerIndex >= 0 && dest.threadIndex() == context.workerIndex && dest.rank() == rank;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <R> CompletableFuture<R> callReturnAsync(ThreadId dest, RemoteSupplier<R> function) {
        return (CompletableFuture<R>) callReturnAsyncOf(dest, function);
    }

    /** {@link #callReturnAsync} of a function of the destination's context. */
    @SuppressWarnings("unchecked")
    <R> CompletableFuture<R> callReturnAsyncInContext(ThreadId dest, RemoteContextFunction<?, R> function) {
        return (CompletableFuture<R>) callReturnAsyncOf(dest, function);
    }

    private CompletableFuture<?> callReturnAsyncOf(ThreadId dest, Serializable function) {
        int global = globalIndex(dest);
        ThreadContext context = context();
        boolean self = isSelf(context, dest);
        return returns.callAsync(context, global, dest, self, function);
    }

    // --------------------------------------------------------------------------------------------------- broadcast

    @Override
    public void broadcast(RemoteRunnable function, Synchronizer sync) {
        broadcast(function, sync, 0, null, null, 0, 0, null);
    }

    @Override
    public void broadcastBuffer(RemoteBufferConsumer function, MemorySegment buffer, long offset, long length,
                                Synchronizer sync) {
        broadcast(function, sync, InvocationRecords.BROADCAST_INLINE, buffer.asSlice(offset, length), null, 0, length,
                null);
    }

    @Override
    public void broadcastBuffer(RemoteBufferConsumer function, LocalRegion source, long sourceOffset,
                                IntFunction<RemoteRegion> destinations, long destinationOffset, long length,
                                Synchronizer sync) {
        long[] regionIds = new long[size];
        long[] tickets = new long[size];
        for (int r = 0; r < size; r++) {
            RemoteRegion destination = destinations.apply(r);
            regionIds[r] = destination.regionId();
            tickets[r] = link(r).write(source, sourceOffset, destination, destinationOffset, length);
        }
        // The tree may reach rank r through another process, so the bytes must have landed before any call leaves.
        for (int r = 0; r < size; r++) {
            link(r).awaitCompletion(tickets[r]);
        }
        broadcast(function, sync, InvocationRecords.BROADCAST_WRITTEN, null, null, destinationOffset, length, regionIds);
    }

    @Override
    public void broadcastBuffer(RemoteBufferConsumer function, RemoteRegion source, long offset, long length,
                                Synchronizer sync) {
        broadcast(function, sync, InvocationRecords.BROADCAST_READ, null, source, offset, length, null);
    }

    private void broadcast(Serializable function, Synchronizer sync, int flags, MemorySegment inline,
                           RemoteRegion readSource, long regionOffset, long length, long[] regionIds) {
        ThreadContext context = context();
        int root = context.workerIndex >= 0 ? rank * threads + context.workerIndex : rank * threads;
        long sequence = context.broadcasts + 1; // taken once the record is known to fit
        boolean ack = sync != null && sync.mode() == Synchronizer.Mode.CONSUMED;
        if (ack) {
            flags |= InvocationRecords.BROADCAST_ACK;
            if (context.ackRegion == null) {
                context.ackRegion = transport.allocate(AckTarget.regionLength(threadCount()), RemoteAccess.WRITE);
                context.ackTarget = new AckTarget(this, context.ackRegion, threadCount());
                context.ownAck = new CounterSlot.Writer(context.ackRegion.segment(), AckTarget.slotOffset(root));
            }
        }
        // A self-contained record (definition included) that every hop forwards unchanged but for the span.
        // One native buffer per thread (see sendBased): a record is sent (copied) before broadcast returns, so a
        // broadcast from inside the local run may reuse it.
        if (context.broadcastRecord == null) {
            context.broadcastRecord = Arena.ofAuto().allocate(config.messenger().chunkSize(), Long.BYTES);
            context.broadcastEncoder = new CallEncoder(registry, "broadcast");
        }
        MemorySegment record = context.broadcastRecord;
        long at = InvocationRecords.BROADCAST_HEADER;
        record.set(ValueLayout.JAVA_INT_UNALIGNED, InvocationRecords.BROADCAST_ROOT, root);
        record.set(ValueLayout.JAVA_INT_UNALIGNED, InvocationRecords.BROADCAST_FLAGS, flags);
        record.set(ValueLayout.JAVA_LONG_UNALIGNED, InvocationRecords.BROADCAST_SEQUENCE, sequence);
        if (ack) {
            context.ackRegion.remote().encode(record, at);
            at += RemoteRegion.ENCODED_LENGTH;
        }
        if (readSource != null) {
            readSource.encode(record, at);
            record.set(ValueLayout.JAVA_LONG_UNALIGNED, at + RemoteRegion.ENCODED_LENGTH, regionOffset);
            record.set(ValueLayout.JAVA_LONG_UNALIGNED, at + RemoteRegion.ENCODED_LENGTH + 8, length);
            at += RemoteRegion.ENCODED_LENGTH + 16;
        } else if (regionIds != null) {
            record.set(ValueLayout.JAVA_LONG_UNALIGNED, at, regionOffset);
            record.set(ValueLayout.JAVA_LONG_UNALIGNED, at + 8, length);
            for (int r = 0; r < size; r++) {
                record.set(ValueLayout.JAVA_LONG_UNALIGNED, at + 16 + 8L * r, regionIds[r]);
            }
            at += 16 + 8L * size;
        }
        long room = record.byteSize() - at - (inline != null ? inline.byteSize() : 0);
        if (room <= 0) {
            throw new MessagingException("broadcastBuffer of " + inline.byteSize() + " bytes does not fit a "
                    + record.byteSize() + "-byte chunk with its " + at + "-byte header: broadcast it from a region "
                    + "(broadcastBuffer with a LocalRegion or RemoteRegion) or raise MessengerConfig.chunkSize");
        }
        context.broadcastEncoder.reset(); // every hop decodes the record on its own: it carries its definition
        int encoded = context.broadcastEncoder.encode(function, record, at, at + room);
        if (encoded < 0) {
            throw new MessagingException("broadcast record does not fit a " + record.byteSize() + "-byte chunk");
        }
        context.broadcasts = sequence;
        at += encoded;
        if (inline != null) {
            MemorySegment.copy(inline, 0, record, at, inline.byteSize());
            at += inline.byteSize();
        }
        if (context.workerIndex >= 0) {
            forwardBroadcast(root, 0, threadCount(), record, 0, at);
            runLocally(context, function, flags, inline, readSource, regionOffset, length, regionIds, ack, sequence, root);
        } else {
            // Not a worker: hand the whole tree to worker 0 of this process, which runs it as the root.
            sendRaw(context, root, record, 0, at, threadCount());
        }
        if (ack) {
            sync.add(context.ackTarget, sequence);
        }
    }

    private void runLocally(ThreadContext context, Serializable function, int flags, MemorySegment inline,
                            RemoteRegion readSource, long regionOffset, long length, long[] regionIds, boolean ack,
                            long sequence, int root) {
        try {
            if (function instanceof RemoteRunnable runnable) {
                runnable.run();
            } else {
                MemorySegment argument = inline;
                if (readSource != null) {
                    LocalRegion own = regions.get(readSource.regionId());
                    argument = own.segment().asSlice(regionOffset, length);
                } else if (regionIds != null) {
                    argument = localRegion(regionIds[rank], regionOffset, length);
                }
                ((RemoteBufferConsumer) function).accept(argument);
            }
        } finally {
            if (ack) {
                context.ownAck.publish(sequence); // the root's own slot, after its run
            }
        }
    }

    /** Sends a broadcast record to the children of {@code relative} in the tree rooted at worker {@code root}. */
    void forwardBroadcast(int root, int relative, int span, MemorySegment record, long offset, long length) {
        ThreadContext context = context();
        int total = threadCount();
        while (span > 1) {
            int half = (span + 1) / 2;
            int child = (root + relative + half) % total;
            sendRaw(context, child, record, offset, length, span - half);
            span = half;
        }
    }

    private void sendRaw(ThreadContext context, int global, MemorySegment record, long offset, long length, int span) {
        ThreadContext.Route route = route(context, 0, global); // view 0: the plain channel (a RETRY_ASYNC one queues)
        RecordChannel channel = route.channel;
        context.markSent(route);
        ThreadContext.RawWriter raw = context.raw();
        raw.source = record;
        raw.offset = offset;
        raw.length = length;
        raw.span = span;
        if (!channel.send(InvocationRecords.BROADCAST, raw)) {
            throw new MessagingException("broadcast to worker " + global + " refused: its buffers are full (FAIL policy)");
        }
    }

    /** Test hook: sends arbitrary bytes as an invocation record of {@code kind} (a misbehaving or corrupt peer). */
    boolean sendRawForTest(ThreadId dest, int kind, byte[] bytes) {
        RecordChannel channel = route(context(), 0, globalIndex(dest)).channel;
        MemorySegment source = MemorySegment.ofArray(bytes);
        return channel.send(kind, (target, offset, limit) -> {
            if (bytes.length > limit) {
                return -1;
            }
            MemorySegment.copy(source, 0, target, offset, bytes.length);
            return bytes.length;
        });
    }

    // ----------------------------------------------------------------------------------------------------- memory

    @Override
    public LocalRegion allocate(long bytes, RemoteAccess access) {
        LocalRegion region = transport.allocate(bytes, access);
        regions.put(region.remote().regionId(), region);
        return region;
    }

    private void releaseRegion(LocalRegion region) {
        regions.remove(region.remote().regionId());
        region.close();
    }

    @Override
    public RemoteRegion allocateRemote(int rank, long bytes, RemoteAccess access) {
        checkRank(rank);
        control.checkAlive(rank);
        return remoteMemory.allocate(link(rank), bytes, access, config.callTimeout());
    }

    @Override
    public void freeRemote(int rank, RemoteRegion region) {
        checkRank(rank);
        control.checkAlive(rank);
        remoteMemory.free(link(rank), region, config.callTimeout());
    }

    private void checkRank(int rank) {
        if (rank < 0 || rank >= size) {
            throw new IllegalArgumentException("no rank " + rank + " in a job of " + size + " processes");
        }
    }

    MemorySegment localRegion(long regionId, long offset, long length) {
        LocalRegion region = regions.get(regionId);
        if (region == null) {
            throw new IllegalArgumentException("call names region " + regionId + ", which rank " + rank
                    + " did not allocate through the fabric");
        }
        if (offset < 0 || length < 0 || offset > region.length() - length) {
            throw new IllegalArgumentException("call names bytes [" + offset + ", " + (offset + length) + ") of region "
                    + regionId + " (length " + region.length() + ")");
        }
        return region.segment().asSlice(offset, length);
    }

    // -------------------------------------------------------------------------------------------------- lifecycle

    /**
     * Flushes the calling thread's channels, and what other threads' channels let another thread flush: their
     * deferred flags and, for the aggregators (which lock), their batches. A plain messenger's sending state belongs
     * to its thread, which may be sending right now.
     */
    @Override
    public void flush() {
        Thread me = Thread.currentThread();
        for (ThreadContext context : allContexts) {
            for (RecordChannel channel : context.allChannels()) {
                if (context.thread == me) {
                    channel.flush(); // bounded by the channel's timeout and the destination's liveness
                } else {
                    channel.flushFromAnotherThread();
                }
            }
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        try {
            flush();
            control.shutdown();
        } finally {
            closed = true;
            for (Thread handler : handlers) {
                try {
                    handler.join(2000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            returns.failAll(rank);
            control.close();
            node.close(); // stops the agent, so the counters publisher too
            if (counters != null) {
                counters.file().close();
            }
            mailboxes.close();
            for (ThreadContext context : allContexts) {
                for (RecordChannel channel : context.allChannels()) {
                    channel.close();
                }
                if (context.receiver != null) {
                    context.receiver.close();
                }
                if (context.ackRegion != null) {
                    context.ackRegion.close();
                }
            }
            sendQueueArena.close();
            regions.values().forEach(LocalRegion::close);
            transport.close();
        }
    }

    @Override
    public String toString() {
        return "Fabric[rank " + rank + " of " + size + ", " + threads + " threads, " + transport.kind() + "]";
    }

}
