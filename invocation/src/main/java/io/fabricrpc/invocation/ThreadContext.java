package io.fabricrpc.invocation;

import io.fabricrpc.api.SyncTarget;

import io.fabricrpc.messaging.RecordChannel;
import io.fabricrpc.messaging.ReceivingThread;
import io.fabricrpc.messaging.RecordWriter;
import io.fabricrpc.serialization.CallEncoder;
import io.fabricrpc.serialization.CapturedCall;
import io.fabricrpc.api.LocalRegion;

import java.lang.foreign.MemorySegment;

/**
 * Per-thread sending state: a messenger and a call encoder per destination thread (Seriema's messengers are
 * per sender thread and destination), reusable record writers, and, for an attached worker, its receiving side.
 * Confined to its thread.
 */
final class ThreadContext {
    final FabricRuntime runtime;
    final long senderId;
    static final int MAX_VIEWS = 16;

    /** The thread this context belongs to (the fast context lookup compares it). */
    final Thread thread;
    /** The view (0 = plain messengers; others, e.g. aggregators) whose channels the current call uses. */
    private int view;
    /** {@code view * threads}: where {@link #view}'s routes start in {@link #routes} (kept: no multiply per call). */
    private int viewBase;
    private final int threads;
    /**
     * Every view's routes in one array, view-major: view v's route to global thread g is at {@code v * threads + g}
     * (null until first used). One array, not a row per view, so that a call through a view reaches its route in two
     * dependent loads, as a plain call does (a row per view cost a third, about 1 ns of a 16-ns call). Grows to the
     * highest view used; replaced, never shrunk, by the owning thread only.
     */
    private Route[] routes;
    final CallEncoder[] sendEncoders;
    MemorySegment sendStaging;
    /** Where this thread builds its broadcast records, and their encoder (reset for each record). */
    MemorySegment broadcastRecord;
    io.fabricrpc.serialization.CallEncoder broadcastEncoder;
    /**
     * One record writer per nesting level: a send that waits for room runs incoming calls (to avoid deadlock),
     * and those may send too; each level keeps its own half-prepared record.
     */
    private final CallWriter[] writers = new CallWriter[MAX_NESTING];
    private final RawWriter[] raws = new RawWriter[MAX_NESTING];
    static final int MAX_NESTING = 4;
    int nesting;

    /** Set for attached workers (and handler threads standing in for them). */
    ReceivingThread receiving;
    CallReceiver receiver;
    int workerIndex = -1;
    boolean inProcessCalls;
    /**
     * The routes a call went out through since this thread last sent their deferred flags, each once (a stack; see
     * {@link #publishDeferredFlags}). Grows to the number of routes the thread uses at most, so not per call.
     */
    private Route[] sentRoutes = new Route[8];
    private int sentRouteCount;

    /** Barriers this worker entered, the last one released to it, and that one's sum (see Collectives). */
    long barrierGeneration;
    long barrierReleased;
    long barrierValue;

    ReturnCalls.CallerState returns;
    long broadcasts;
    LocalRegion ackRegion;
    AckTarget ackTarget;
    /** Publishes this thread's own slot of {@link #ackRegion} when it runs its broadcast as the root. */
    io.fabricrpc.transport.CounterSlot.Writer ownAck;

    ThreadContext(FabricRuntime runtime, long senderId, int threads) {
        this.runtime = runtime;
        this.senderId = senderId;
        this.threads = threads;
        this.thread = Thread.currentThread();
        this.routes = new Route[threads];
        this.sendEncoders = new CallEncoder[threads];
    }

    CallWriter writer() {
        CallWriter writer = writers[nesting];
        if (writer == null) {
            writer = new CallWriter();
            writers[nesting] = writer;
        }
        return writer;
    }

    RawWriter raw() {
        RawWriter raw = raws[nesting];
        if (raw == null) {
            raw = new RawWriter();
            raws[nesting] = raw;
        }
        return raw;
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

    /** The current view's route to global thread {@code global}, or null before its first use. */
    Route route(int global) {
        return routeAt(viewBase + global);
    }

    /** {@code view}'s route to global thread {@code global}, or null before its first use. */
    Route route(int view, int global) {
        return routeAt(view * threads + global);
    }

    private Route routeAt(int at) {
        Route[] all = routes;
        return at < all.length ? all[at] : null;
    }

    void setRoute(int view, int global, Route route) {
        int at = view * threads + global;
        if (at >= routes.length) {
            routes = java.util.Arrays.copyOf(routes, (view + 1) * threads);
        }
        routes[at] = route;
    }

    /** {@code view}'s routes that are in use. */
    java.util.List<Route> routesOf(int view) {
        java.util.List<Route> used = new java.util.ArrayList<>();
        Route[] all = routes;
        for (int at = view * threads, end = Math.min(all.length, at + threads); at < end; at++) {
            if (all[at] != null) {
                used.add(all[at]);
            }
        }
        return used;
    }

    /** Notes that a call went out through {@code route}: its channel may have a flag waiting. */
    void markSent(Route route) {
        if (!route.sentSinceFlags) {
            route.sentSinceFlags = true;
            if (sentRouteCount == sentRoutes.length) {
                sentRoutes = java.util.Arrays.copyOf(sentRoutes, sentRoutes.length * 2);
            }
            sentRoutes[sentRouteCount++] = route;
        }
    }

    /**
     * Sends the flags this thread's channels left waiting for a next call (RDMA's deferred publication): the thread
     * is about to wait, or has finished a round of calls. Visits only the routes used since the last time, so the
     * cost follows the calls made, not the number of destinations. Allocates nothing. Re-entrant: sending a flag
     * may wait and run incoming calls that send and come back here; each route is popped before its flag goes out,
     * and one sent again meanwhile is pushed again.
     */
    void publishDeferredFlags() {
        while (sentRouteCount > 0) {
            Route route = sentRoutes[--sentRouteCount];
            sentRoutes[sentRouteCount] = null;
            route.sentSinceFlags = false;
            route.channel.publishDeferred();
        }
    }

    /** Every channel of every view, for flush and close. */
    java.util.List<RecordChannel> allChannels() {
        java.util.List<RecordChannel> all = new java.util.ArrayList<>();
        for (Route route : routes) { // racy from other threads (flush): a route published late is flushed next time
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
         * The channel's {@link RecordChannel#direct()}, kept up to date by the channel (plain: the route and
         * its channel belong to one thread).
         */
        RecordChannel direct;
        /** On {@link #sentRoutes} (the owning thread's; plain: a route belongs to one thread). */
        boolean sentSinceFlags;

        Route(RecordChannel channel, CallEncoder encoder, SyncTarget sent, SyncTarget consumed) {
            this.channel = channel;
            this.encoder = encoder;
            this.sent = sent;
            this.consumed = consumed;
            this.direct = channel.direct();
            channel.bindDirect(direct -> this.direct = direct);
        }
    }

    /**
     * Writes an invocation record: an optional kind-specific header, the encoded call, an optional trailing
     * buffer. Fields are set before each send (no allocation per call).
     */
    static final class CallWriter implements RecordWriter {
        CallEncoder encoder;
        /** The call's function, taken apart when the call is made: the lambda itself is not kept (CapturedCall). */
        final CapturedCall call = new CapturedCall();
        final MemorySegment header = MemorySegment.ofArray(new byte[64]);
        int headerLength;
        MemorySegment trailer;
        long trailerOffset;
        long trailerLength;

        /** Prepares a plain call of the function just captured into {@link #call}. */
        void prepare(CallEncoder encoder) {
            this.encoder = encoder;
            this.headerLength = 0;
            this.trailer = null;
            this.trailerLength = 0;
        }

        @Override
        public long write(MemorySegment target, long offset, long room) {
            if ((headerLength | trailerLength) == 0) {
                // A plain call: kept apart from the copies below so that this stays small enough to inline.
                int encoded = room > 0 ? encoder.encode(call, target, offset, offset + room) : -1;
                return encoded < 0 ? -1 : encoded;
            }
            return writeWithHeaderOrTrailer(target, offset, room);
        }

        @Override
        public int knownLength() {
            return (headerLength | trailerLength) == 0 ? encoder.knownLength(call) : -1;
        }

        @Override
        public void writeKnown(MemorySegment target, long offset) {
            encoder.writeKnown(call, target, offset);
        }

        private long writeWithHeaderOrTrailer(MemorySegment target, long offset, long roomForAll) {
            long room = roomForAll - headerLength - trailerLength;
            if (room <= 0) {
                return -1;
            }
            int encoded = encoder.encode(call, target, offset + headerLength, offset + headerLength + room);
            if (encoded < 0) {
                return -1;
            }
            if (headerLength > 0) {
                MemorySegment.copy(header, 0, target, offset, headerLength);
            }
            if (trailerLength > 0) {
                MemorySegment.copy(trailer, trailerOffset, target, offset + headerLength + encoded, trailerLength);
            }
            return headerLength + encoded + trailerLength;
        }
    }

    /** Copies prepared bytes (a broadcast record), patching the span field for each child. */
    static final class RawWriter implements RecordWriter {
        MemorySegment source;
        long offset;
        long length;
        int span;

        @Override
        public long write(MemorySegment target, long at, long limit) {
            if (length > limit) {
                return -1;
            }
            MemorySegment.copy(source, offset, target, at, length);
            target.set(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED, at + InvocationRecords.BROADCAST_SPAN, span);
            return length;
        }
    }
}
