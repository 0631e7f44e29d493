package io.fabricrpc.invocation;

import io.fabricrpc.api.SyncTarget;

import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.counters.CounterSource;
import io.fabricrpc.counters.CountersPublisher;
import io.fabricrpc.fabric.ControlPlane;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.api.FullPolicy;
import io.fabricrpc.messaging.Messenger;
import io.fabricrpc.api.MessengerConfig;
import io.fabricrpc.messaging.MessagingNode;
import io.fabricrpc.messaging.RecordChannel;
import io.fabricrpc.serialization.CallEncoder;
import io.fabricrpc.transport.EndpointAddress;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.IntFunction;

/**
 * One thread's routes, per view and destination thread, and their construction from the process-wide
 * {@link Network} on first use. Owned by its thread: the table is grown (replaced, never shrunk), written and the
 * current view switched by that thread only; flush and close read the table racily (a route published late is
 * flushed next time). {@link ThreadContext} is the only subclass, for its field layout.
 */
class Routes {
    static final int MAX_VIEWS = 16;
    /** A view's channels carry the sender's thread index with the view above this bit (ThreadNames shows it). */
    static final int VIEW_SHIFT = 20;

    private final Network network;
    private final long senderId;
    private final int threads;
    /** The view (0 = plain messengers; others, e.g. aggregators) whose channels the current call uses. */
    private int view;
    /** {@code view * threads}: where {@link #view}'s routes start in {@link #table} (kept: no multiply per call). */
    private int viewBase;
    /**
     * Every view's routes in one array, view-major: view v's route to global thread g is at {@code v * threads + g}
     * (null until first used). One array, not a row per view, so that a call through a view reaches its route in as
     * few dependent loads as a plain call does.
     */
    private Route[] table;
    /**
     * The routes a call went out through since this thread last sent their deferred flags, each once (a stack; see
     * {@link #publishDeferredFlags}). Grows to the number of routes the thread uses at most, so not per call.
     */
    private Route[] sent = new Route[8];
    private int sentCount;

    Routes(Network network, long senderId) {
        this.network = network;
        this.senderId = senderId;
        this.threads = network.jobThreads();
        this.table = new Route[threads];
    }

    /** The current view's route to global thread {@code global}, created on first use. */
    Route route(int global) {
        Route[] all = table;
        int at = viewBase + global;
        Route route = at < all.length ? all[at] : null;
        return route != null ? route : newRoute(view, global);
    }

    /** {@code view}'s route to global thread {@code global}, created on first use. */
    Route route(int view, int global) {
        Route route = existing(view, global);
        return route != null ? route : newRoute(view, global);
    }

    private Route existing(int view, int global) {
        Route[] all = table;
        int at = view * threads + global;
        return at < all.length ? all[at] : null;
    }

    /** The view whose channels calls of this thread use now. */
    int view() {
        return view;
    }

    /** Switches to {@code view}'s channels; returns the previous view, to switch back to in a {@code finally}. */
    int enterView(int view) {
        int previous = this.view;
        this.view = view;
        this.viewBase = view * threads;
        return previous;
    }

    private Route newRoute(int view, int global) {
        int destRank = global / network.threads;
        long destination = ThreadId.pack(destRank, global % network.threads);
        network.control.checkAlive(destRank);
        ChannelFactory factory = network.views.get(view);
        // Each view is its own channel, so its sender id is distinct: the receiver keeps one inbox per sender.
        long sender = ThreadId.pack(network.rank, ThreadId.threadIndexOf(senderId) | view << VIEW_SHIFT);
        MessengerConfig plainConfig = network.config.messenger();
        MessengerConfig config = factory == null ? plainConfig : factory.messengerConfig(plainConfig);
        // RETRY_ASYNC is a channel over a FAIL messenger; views choose their own policy (messengerConfig).
        boolean async = config.fullPolicy() == FullPolicy.RETRY_ASYNC;
        MessagingNode node = network.node;
        Messenger messenger = node.messenger(sender, destination, network.addresses.apply(destRank),
                async ? config.withFullPolicy(FullPolicy.FAIL) : config);
        messenger.whileWaiting(network.runtime::help);
        RecordChannel plain = async ? node.asyncQueue(messenger, config.asyncQueueLimitBytes()) : messenger;
        RecordChannel channel = factory == null ? plain : factory.wrap(messenger);
        CounterSource layer = network.counters != null && channel != plain ? channel.counters() : null;
        if (layer != null) {
            network.counters.register(layer); // a view's layer: an aggregator's batches and flushes
        }
        CallEncoder encoder = new CallEncoder(network.config.registry(), ThreadId.fromLong(sender) + " -> "
                + ThreadId.fromLong(destination));
        Route route = new Route(channel, encoder, new ChannelTarget(network.runtime, channel, destRank, false),
                new ChannelTarget(network.runtime, channel, destRank, true));
        int at = view * threads + global;
        if (at >= table.length) {
            table = Arrays.copyOf(table, (view + 1) * threads);
        }
        table[at] = route; // plain: its calls run on this thread; flush elsewhere reads it racily (allChannels)
        return route;
    }

    /** Notes that a call went out through {@code route}: its channel may have a flag waiting. */
    void markSent(Route route) {
        if (!route.sentSinceFlags) {
            route.sentSinceFlags = true;
            if (sentCount == sent.length) {
                sent = Arrays.copyOf(sent, sent.length * 2);
            }
            sent[sentCount++] = route;
        }
    }

    /**
     * Sends the flags this thread's channels left waiting for a next call (RDMA's deferred publication): the thread
     * is about to wait, or has finished a round of calls. Visits only the routes used since the last time, allocating
     * nothing. Re-entrant: sending a flag may wait and run incoming calls that send and come back here; each route is
     * popped before its flag goes out, and one sent again meanwhile is pushed again.
     */
    void publishDeferredFlags() {
        while (sentCount > 0) {
            Route route = sent[--sentCount];
            sent[sentCount] = null;
            route.sentSinceFlags = false;
            route.channel.publishDeferred();
        }
    }

    /**
     * Where a call to {@code global} made now must follow this thread's one-way calls to it: the records sent on
     * their channel ({@link #orderChannel}) after pushing them out, or -1 if it has none. The destination runs the
     * call only once it has consumed that many records of the channel.
     */
    long recordsBefore(int global) {
        Route route = existing(0, global);
        if (route == null) {
            return -1;
        }
        RecordChannel channel = route.channel;
        if (channel.bufferedBytes() > 0) {
            channel.flush(); // the call depends on them: they must not sit in a batch
        }
        publishDeferredFlags();
        return channel.recordsSent();
    }

    /** The id of this thread's channels, as {@link #recordsBefore} counts on them. */
    long orderChannel() {
        return ThreadId.pack(network.rank, ThreadId.threadIndexOf(senderId));
    }

    /** {@code view}'s routes that are in use. */
    List<Route> routesOf(int view) {
        List<Route> used = new ArrayList<>();
        Route[] all = table;
        for (int at = view * threads, end = Math.min(all.length, at + threads); at < end; at++) {
            if (all[at] != null) {
                used.add(all[at]);
            }
        }
        return used;
    }

    /** Flushes this thread's channels of {@code view}. */
    void flushView(int view) {
        for (Route route : routesOf(view)) {
            route.channel.flush();
        }
    }

    /** Flushes {@code view}'s channels and sends each destination a one-way shutdown signal behind the last call. */
    void shutdownView(int view) {
        for (Route route : routesOf(view)) {
            route.channel.send(InvocationRecords.SHUTDOWN_SIGNAL, (target, offset, limit) -> limit >= 1 ? 1 : -1);
            route.channel.flush();
        }
    }

    long bufferedBytes(int view) {
        long bytes = 0;
        for (Route route : routesOf(view)) {
            bytes += route.channel.bufferedBytes();
        }
        return bytes;
    }

    /** Every channel of every view, for flush and close. */
    List<RecordChannel> allChannels() {
        List<RecordChannel> all = new ArrayList<>();
        for (Route route : table) { // racy from other threads (flush): a route published late is flushed next time
            if (route != null) {
                all.add(route.channel);
            }
        }
        return all;
    }

    /**
     * What a call from this thread to one destination in one view goes through: the channel, the encoder of its
     * link and direction, and the two synchronizer targets of the channel. Built on first use, then never changes,
     * so a call loads one object instead of one per array.
     */
    static final class Route {
        final RecordChannel channel;
        final CallEncoder encoder;
        final SyncTarget sent;
        final SyncTarget consumed;
        /**
         * The channel's {@link RecordChannel#direct()} if it is a messenger, else null (calls then go through the
         * channel); kept up to date by the channel (the route's thread's). Typed so the call site binds statically.
         */
        Messenger direct;
        /** On {@link #sent} of the owning thread (plain: a route belongs to one thread). */
        boolean sentSinceFlags;

        Route(RecordChannel channel, CallEncoder encoder, SyncTarget sent, SyncTarget consumed) {
            this.channel = channel;
            this.encoder = encoder;
            this.sent = sent;
            this.consumed = consumed;
            this.direct = messengerOrNull(channel.direct());
            channel.bindDirect(direct -> this.direct = messengerOrNull(direct));
        }

        private static Messenger messengerOrNull(RecordChannel direct) {
            return direct instanceof Messenger m ? m : null;
        }
    }

    /**
     * What every thread's routes of one process are built from; views are appended under its lock, up to
     * {@value #MAX_VIEWS} - 1 besides the plain one (view 0, no factory).
     */
    static final class Network {
        private final FabricRuntime runtime;
        private final FabricConfig config;
        private final MessagingNode node;
        private final CountersPublisher counters;
        private final ControlPlane control;
        private final IntFunction<EndpointAddress> addresses;
        private final int rank;
        private final int threads;
        private final int size;
        private final List<ChannelFactory> views = new CopyOnWriteArrayList<>(Collections.singletonList(null));

        Network(FabricRuntime runtime, FabricConfig config, MessagingNode node, CountersPublisher counters,
                ControlPlane control, IntFunction<EndpointAddress> addresses) {
            this.runtime = runtime;
            this.config = config;
            this.node = node;
            this.counters = counters;
            this.control = control;
            this.addresses = addresses;
            this.rank = config.job().rank();
            this.threads = config.job().threadsPerProcess();
            this.size = config.job().size();
        }

        int jobThreads() {
            return size * threads;
        }

        /** {@code dest}'s index among all worker threads of the job, checked. */
        int globalIndex(ThreadId dest) {
            return globalIndex(dest, size, threads);
        }

        /** {@code dest}'s index among the workers of a job of {@code size} processes x {@code threads}, checked. */
        static int globalIndex(ThreadId dest, int size, int threads) {
            int rank = dest.rank();
            int thread = dest.threadIndex();
            if (rank < 0 || rank >= size || thread < 0 || thread >= threads) {
                throw new IllegalArgumentException("no worker " + dest + " in a job of " + size + " processes x "
                        + threads + " threads");
            }
            return rank * threads + thread;
        }

        /** Adds a view whose channels {@code factory} makes; returns its number. */
        synchronized int addView(ChannelFactory factory) {
            if (views.size() == MAX_VIEWS) {
                throw new IllegalStateException("at most " + (MAX_VIEWS - 1) + " views per fabric");
            }
            views.add(factory);
            return views.size() - 1;
        }
    }
}
