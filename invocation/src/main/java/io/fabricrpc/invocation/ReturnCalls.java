package io.fabricrpc.invocation;

import io.fabricrpc.api.DeadlineExceededException;
import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.mailbox.AllPortsBusyException;
import io.fabricrpc.messaging.SendingAgent;
import io.fabricrpc.mailbox.MailboxClient;
import io.fabricrpc.mailbox.MailboxServer;
import io.fabricrpc.mailbox.MailboxTimeoutException;
import io.fabricrpc.mailbox.PacketReader;
import io.fabricrpc.mailbox.Port;
import io.fabricrpc.api.MessagingException;
import io.fabricrpc.messaging.RecordChannel;
import io.fabricrpc.serialization.CallEncoder;
import io.fabricrpc.serialization.ResultCodec;
import io.fabricrpc.api.SerializationRegistry;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;

import java.io.Serializable;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;

/**
 * The caller's side of {@code callReturn} over mailbox ports (LLVM libc's RPC client): the call record goes into a
 * port's packet, the destination worker answers in the same packet. Blocking calls {@code send} then {@code recv}
 * on the port; asynchronous ones leave the port with their future as token ({@link Port#closeAwaiting}), and the
 * reply is collected by whoever next locks the port: the next caller, a thread waiting on the future (or on a stage
 * depending on it), or a sweep of {@link PendingReturns}. Invariant: a future completes once, from its reply, its
 * deadline, a cancel or its peer's failure; its port stays reserved until the reply is collected.
 *
 * <p>A worker serves calls while its own waits, so waits nest; a nested wait moves the fragments of the thread's
 * calls below it ({@link Port#advanceSuspended}), and each depth encodes into its own request buffer. Chosen over
 * one-sided delivery of large results: no extra registered memory or protocol, and requests stream the same way.
 *
 * <p>Request (in the packet, streamed when longer): | sender thread (8) | messenger channel (8) | records sent on
 * it before this call (8) | flags (4) | call record |. Reply: a result record ({@link ResultCodec}).
 */
final class ReturnCalls implements MailboxClient.ReplyCollector {
    static final int SENDER = 0;
    static final int CHANNEL = 8;
    static final int BEFORE = 16;
    static final int FLAGS = 24;
    static final int HEADER = 28;
    /** The record carries its function's definition and is decoded by a decoder reset for it alone. */
    static final int SELF_CONTAINED = 1;

    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final Object BLOCKING = new Object();

    /**
     * What a port's pending reply is collected for: a call's future, or {@link LateDefinition}. Its reply having
     * arrived means the server has decoded the request, so the definitions it carried are known there.
     */
    interface ReplyToken {
        /** Collector, with the port locked: the reply (or a corrupt packet in its place) arrived. */
        void replyArrived();

        /** Any thread: whether {@link #replyArrived} ran. */
        boolean hasReply();
    }

    /** A blocking call that carried definitions and ended at its deadline: its late reply still tells they arrived. */
    static final class LateDefinition implements ReplyToken {
        private volatile boolean arrived;

        @Override
        public void replyArrived() {
            arrived = true; // volatile: the caller's next encode reads it
        }

        @Override
        public boolean hasReply() {
            return arrived;
        }
    }

    private final FabricRuntime runtime;
    private final SerializationRegistry registry;
    private final Duration callTimeout;
    private final PendingReturns pending;
    private final ThreadLocal<ResultCodec> codecs;

    ReturnCalls(FabricRuntime runtime, SerializationRegistry registry, Duration callTimeout, SendingAgent agent) {
        this.runtime = runtime;
        this.registry = registry;
        this.callTimeout = callTimeout;
        this.pending = new PendingReturns(agent, runtime.rank());
        this.codecs = ThreadLocal.withInitial(() -> new ResultCodec(registry));
    }

    /** The asynchronous calls whose futures are still open. */
    PendingReturns pending() {
        return pending;
    }

    /** The timeout a call gets when it names none. */
    long defaultTimeoutNanos() {
        return callTimeout.toNanos();
    }

    /**
     * Per caller thread: encoders per destination, the request buffer, calls whose definitions are in flight, and
     * what a call in progress reuses so it allocates nothing: its reply reader and messenger order.
     */
    static final class CallerState {
        final CallEncoder[] encoders;
        final Object[] defining;
        final PacketReader reader;
        CallEncoder selfContained;
        /** Per nesting depth of this thread's calls: the request buffer, held from encoding until sent. */
        LocalRegion[] requests = new LocalRegion[2];
        int depth;
        Object value;
        /** The messenger channel this call must follow (0: none) and the records sent on it before the call. */
        long orderChannel;
        long orderBefore;

        CallerState(int workers, ResultCodec codec) {
            encoders = new CallEncoder[workers];
            defining = new Object[workers];
            reader = (message, size) -> value = codec.decode(message, 0, size);
        }
    }

    // ------------------------------------------------------------------------------------------------ serving

    /**
     * Serves the requests waiting on this worker's mailbox ports, at most one scan of each channel. A request that
     * must follow one-way calls of its sender not consumed yet is left for a later round ({@link Port#defer}).
     */
    int serve(ThreadContext context) {
        int served = 0;
        for (MailboxChannelSet.Served channel : runtime.mailboxes().servedBy(context.workerIndex)) {
            MailboxServer server = channel.server();
            for (int i = server.portCount(); i > 0; i--) {
                Port port = server.tryOpen();
                if (port == null) {
                    break;
                }
                if (mustWait(context, port, channel.callerRank())) {
                    port.defer();
                    continue;
                }
                context.receiver.serveMailbox(port, channel.callerRank());
                served++;
            }
        }
        return served;
    }

    private static boolean mustWait(ThreadContext context, Port port, int callerRank) {
        MemorySegment head;
        try {
            head = port.peek();
        } catch (RuntimeException corrupt) {
            return false; // serveMailbox answers it with the error
        }
        if (head.byteSize() < HEADER) {
            return false;
        }
        long channel = head.get(ValueLayout.JAVA_LONG_UNALIGNED, CHANNEL);
        long before = head.get(ValueLayout.JAVA_LONG_UNALIGNED, BEFORE);
        return before > 0 && ThreadId.rankOf(channel) == callerRank
                && context.receiving.consumedFrom(channel) < before;
    }

    // ------------------------------------------------------------------------------------------------ blocking

    Object call(ThreadContext context, int global, ThreadId dest, Serializable function, long timeoutNanos) {
        long started = System.nanoTime();
        MailboxClient client = runtime.mailboxes().client(global);
        CallerState state = state(context);
        int depth = state.depth++; // calls nested in this one's waits encode into the next request buffer
        try {
            // The port first: an encoder counts definitions as sent, so nothing may stop the call after encoding.
            Port port = open(client, dest, started, timeoutNanos);
            long length;
            try {
                length = encode(context, state, depth, global, dest, function);
            } catch (RuntimeException | Error e) {
                port.close();
                throw e;
            }
            boolean defines = length < 0;
            length = Math.abs(length);
            if (defines) {
                state.defining[global] = BLOCKING; // nested calls to dest meanwhile carry their own definitions
            }
            boolean sent = false;
            try {
                port.send(state.requests[depth].segment(), 0, length);
                sent = true;
                port.recv(state.reader, Math.max(1, timeoutNanos - (System.nanoTime() - started)));
                Object value = state.value;
                state.value = null;
                return value;
            } catch (MailboxTimeoutException e) {
                // The port closes awaiting: its late reply is collected and dropped by the port's next holder. One
                // that carried definitions keeps later calls to dest self-contained until that reply arrives.
                if (defines) {
                    LateDefinition late = new LateDefinition();
                    port.closeAwaiting(late);
                    state.defining[global] = late;
                    defines = false;
                }
                DeadlineExceededException late = new DeadlineExceededException("no result from " + dest + " within "
                        + timeoutNanos / 1_000_000 + " ms (the call's deadline; port " + port.index() + ")", sent);
                late.initCause(e);
                throw late;
            } catch (PeerFailedException e) {
                throw new PeerFailedException(e.rank(), e.reason() + (sent ? " (with a call to " + dest
                        + " in flight: it may have run)" : " (the call to " + dest + " was not sent: it did not run)"),
                        e.isOrderlyDeparture(), e);
            } finally {
                port.close();
                if (defines) {
                    state.defining[global] = null;
                }
            }
        } finally {
            state.depth--;
        }
    }

    // ------------------------------------------------------------------------------------------------- async

    CompletableFuture<?> callAsync(ThreadContext context, int global, ThreadId dest, boolean self,
                                   Serializable function, long timeoutNanos) {
        long started = System.nanoTime();
        MailboxClient client = runtime.mailboxes().client(global);
        CallerState state = state(context);
        int depth = state.depth++; // calls nested in this one's waits encode into the next request buffer
        long length;
        ReturnFuture future;
        Port port;
        try {
            // The port first: an encoder counts definitions as sent, so nothing may stop the call after encoding.
            port = open(client, dest, started, timeoutNanos);
            future = new ReturnFuture(runtime, client, port.index(), dest, self, started, timeoutNanos);
            try {
                length = encode(context, state, depth, global, dest, function);
                port.send(state.requests[depth].segment(), 0, Math.abs(length));
            } catch (RuntimeException | Error e) {
                port.close();
                throw e;
            }
        } finally {
            state.depth--;
        }
        port.closeAwaiting(future);
        if (length < 0) {
            state.defining[global] = future; // later calls to dest wait for it, so the definition arrives first
        }
        pending.add(future);
        if (self && !context.inProcessCalls) {
            future.awaitUninterruptibly(); // runs this worker's calls, this one included, in their order
        }
        return future;
    }

    /** A port for a call started at {@code started}: waits for one until the call's deadline at most. */
    private static Port open(MailboxClient client, ThreadId dest, long started, long timeoutNanos) {
        long openTimeout = client.config().openTimeout().toNanos(); // both bounds count from the call's start
        try {
            return client.open(started, Math.min(timeoutNanos, openTimeout));
        } catch (AllPortsBusyException e) {
            if (timeoutNanos >= openTimeout) {
                throw e;
            }
            DeadlineExceededException late = new DeadlineExceededException("callReturn to " + dest + ": the deadline"
                    + " of " + timeoutNanos / 1_000_000 + " ms passed while every mailbox port was busy", false);
            late.initCause(e);
            throw late;
        } catch (PeerFailedException e) {
            throw new PeerFailedException(e.rank(), e.reason() + " (the call to " + dest + " was not sent: it did not"
                    + " run)", e.isOrderlyDeparture(), e);
        }
    }

    /** Encodes the request into the caller's buffer: its length, negated if it carries a new definition. */
    private long encode(ThreadContext context, CallerState state, int depth, int global, ThreadId dest,
                        Serializable function) {
        boolean selfContained = false;
        Object defining = state.defining[global];
        if (defining instanceof ReplyToken earlier && earlier.hasReply()) {
            state.defining[global] = null; // its definitions have arrived: ids alone are safe again
        } else if (defining != null) {
            // The server may serve this port before the one carrying those definitions: carry our own, never wait.
            selfContained = true;
        }
        order(context, state, global);
        CallEncoder encoder;
        if (selfContained) {
            if (state.selfContained == null) {
                state.selfContained = new CallEncoder(registry, "mailbox " + ThreadId.fromLong(context.senderId));
            }
            encoder = state.selfContained;
            encoder.reset();
        } else {
            encoder = state.encoders[global];
            if (encoder == null) {
                encoder = new CallEncoder(registry, ThreadId.fromLong(context.senderId) + " -> " + dest);
                state.encoders[global] = encoder;
            }
        }
        int before = encoder.functionCount();
        ThreadContext.CallWriter writer = context.writer();
        writer.call.capture(function);
        while (true) {
            MemorySegment request = request(state, depth).segment();
            int encoded = encoder.encode(writer.call, request, HEADER, request.byteSize());
            if (encoded >= 0) {
                request.set(LONG, SENDER, context.senderId);
                request.set(LONG, CHANNEL, state.orderChannel);
                request.set(LONG, BEFORE, state.orderBefore);
                request.set(ValueLayout.JAVA_INT_UNALIGNED, FLAGS, selfContained ? SELF_CONTAINED : 0);
                long length = HEADER + encoded;
                return !selfContained && encoder.functionCount() > before ? -length : length;
            }
            long limit = runtime.mailboxes().config().maxMessageBytes();
            if (request.byteSize() >= limit) {
                throw new MessagingException("callReturn to " + dest + ": the call record does not fit the largest"
                        + " mailbox message of " + limit + " bytes (" + MailboxChannelSet.MAX_MESSAGE_KEY + ")");
            }
            growRequest(state, depth, Math.min(limit, request.byteSize() * 4));
        }
    }

    /**
     * Where this call stands among the caller's one-way calls to the same worker: their messenger channel and the
     * records sent on it so far, flushed (the server runs the call only after consuming them).
     */
    private void order(ThreadContext context, CallerState state, int global) {
        long before = context.recordsBefore(global);
        state.orderChannel = before < 0 ? 0 : context.orderChannel();
        state.orderBefore = Math.max(before, 0);
    }

    private CallerState state(ThreadContext context) {
        CallerState state = context.returns;
        if (state == null) {
            state = new CallerState(runtime.threadCount(), codecs.get());
            context.returns = state;
        }
        return state;
    }

    /** The request buffer of calls at nesting depth {@code depth} of this thread, made on first use. */
    private LocalRegion request(CallerState state, int depth) {
        if (depth >= state.requests.length) {
            state.requests = Arrays.copyOf(state.requests, depth + 2);
        }
        if (state.requests[depth] == null) {
            growRequest(state, depth, runtime.mailboxes().config().packetSize());
        }
        return state.requests[depth];
    }

    private void growRequest(CallerState state, int depth, long bytes) {
        if (state.requests[depth] != null) {
            state.requests[depth].close();
        }
        state.requests[depth] = runtime.transport().allocate(bytes, RemoteAccess.NONE); // plain native, as encoders need
    }

    // ---------------------------------------------------------------------------------------------- collecting

    @Override
    public void collect(Object token, MemorySegment message, long length) {
        ((ReplyToken) token).replyArrived();
        if (!(token instanceof ReturnFuture future) || future.isClaimed()) {
            return; // the call already ended (deadline, cancel): its late result is dropped
        }
        Object value;
        try {
            value = codecs.get().decode(message, 0, length);
        } catch (RuntimeException e) {
            future.fail(e); // the remote function threw, or a corrupt result
            return;
        }
        future.succeed(value);
    }

    @Override
    public void failed(Object token, RuntimeException failure) {
        ((ReplyToken) token).replyArrived();
        if (token instanceof ReturnFuture future) {
            future.fail(failure);
        }
    }
}
