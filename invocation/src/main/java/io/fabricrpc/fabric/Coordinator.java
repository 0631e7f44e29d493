package io.fabricrpc.fabric;

import io.fabricrpc.api.JobConfig;
import io.fabricrpc.api.ControlPlaneException;

import static io.fabricrpc.fabric.ControlProtocol.*;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.PromiseCombiner;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Rank 0's side of the control plane. Everything except the constructor runs on the event loop. */
final class Coordinator implements ControlPlane.Role {

    private static final Log LOG = Log.of(Coordinator.class);
    /**
     * A connection that has not completed the handshake by then is refused, so that half-open connections cannot pile
     * up (capped by the join timeout). Slow hosts (an emulated test bed) raise it with this system property.
     */
    private static final long MAX_HANDSHAKE_MILLIS = Long.getLong("fabricrpc.handshakeTimeoutMillis", 10_000);
    /** How long a refused rank has to join validly before the whole join is aborted (a system property for tests). */
    private final long abortGraceMillis = Long.getLong("fabricrpc.joinAbortGraceMillis", 1_000);
    /** Connections still in the handshake, in all and per source host; beyond either the oldest is dropped. */
    private final int maxPendingJoins;
    private final int maxPendingJoinsPerHost;

    private final ControlPlane cp;
    private final JobConfig cfg;
    private final EventLoop loop;
    private final byte[] secret;
    private final SecureRandom random = new SecureRandom();
    private final Channel server;
    private final int boundPort;
    private final long failureTimeoutNanos;

    private final Set<Conn> conns = new java.util.LinkedHashSet<>(); // in arrival order
    /** Authenticated connection per rank (index 0 unused). */
    private final Conn[] claimed;
    private final Membership.Member[] registered;
    private int registeredCount;
    private Map<String, byte[]> ownDescriptors;
    private CompletableFuture<Membership> joinResult;
    private ScheduledFuture<?> joinTimer;
    private Membership membership;
    private ScheduledFuture<?> heartbeatTask;
    private long lastTickNanos;
    private final boolean[] arrived;
    private CompletableFuture<Void> shutdownResult;
    private boolean released;
    private boolean closing;
    private boolean muted;

    Coordinator(ControlPlane cp, JobConfig cfg, EventLoop loop) {
        this.cp = cp;
        this.cfg = cfg;
        this.loop = loop;
        this.secret = cfg.jobSecret();
        this.claimed = new Conn[cfg.size()];
        this.registered = new Membership.Member[cfg.size()];
        this.arrived = new boolean[cfg.size()];
        this.failureTimeoutNanos = cfg.failureTimeout().toNanos();
        this.maxPendingJoins = Integer.getInteger("fabricrpc.maxPendingJoins", Math.max(64, 2 * cfg.size()));
        this.maxPendingJoinsPerHost = Integer.getInteger("fabricrpc.maxPendingJoinsPerHost", Math.max(16, cfg.size()));
        String bindHost = bindHost(cfg);
        ServerBootstrap b = new ServerBootstrap()
            .group(loop)
            .channel(NioServerSocketChannel.class)
            .option(ChannelOption.SO_REUSEADDR, true)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel ch) {
                    Conn c = new Conn();
                    ch.pipeline().addLast(c.decoder, new LengthFieldPrepender(LENGTH_FIELD_BYTES), c);
                }
            });
        ChannelFuture f = b.bind(bindHost, cfg.coordinatorPort()).awaitUninterruptibly();
        if (!f.isSuccess()) {
            throw new ControlPlaneException("rank 0 cannot bind the coordinator address " + bindHost + ":"
                + cfg.coordinatorPort() + ": " + f.cause(), f.cause());
        }
        server = f.channel();
        boundPort = ((InetSocketAddress) server.localAddress()).getPort();
        LOG.debug("coordinator for a job of {} listening on {}", cfg.size(), server.localAddress());
    }

    private static String bindHost(JobConfig cfg) {
        if (cfg.bindHost() != null) {
            return cfg.bindHost();
        }
        try {
            if (InetAddress.getByName(cfg.coordinatorHost()).isLoopbackAddress()) {
                return cfg.coordinatorHost();
            }
        } catch (UnknownHostException e) {
            LOG.debug("cannot resolve {}; binding all interfaces", cfg.coordinatorHost(), e);
        }
        return "0.0.0.0";
    }

    String registeredRanks() {
        List<Integer> ranks = new ArrayList<>();
        for (int r = 1; r < cfg.size(); r++) {
            if (registered[r] != null) {
                ranks.add(r);
            }
        }
        return ranks.toString();
    }

    int boundPort() {
        return boundPort;
    }

    // ------------------------------------------------------------------------------------------ join

    @Override
    public void join(Map<String, byte[]> descriptors, CompletableFuture<Membership> result) {
        if (closing) {
            result.completeExceptionally(new ControlPlaneException("rank 0: control plane closed"));
            return;
        }
        ownDescriptors = descriptors;
        joinResult = result;
        joinTimer = loop.schedule(this::joinTimedOut, cfg.joinTimeout().toMillis(), TimeUnit.MILLISECONDS);
        maybeForm();
    }

    /** A refusal a rank cannot recover from by itself: the job cannot form without fixing its configuration. */
    private static boolean isMisconfiguration(JoinRefusedException.Reason reason) {
        return reason == JoinRefusedException.Reason.WRONG_SECRET || reason == JoinRefusedException.Reason.MISSING_SECRET
            || reason == JoinRefusedException.Reason.CONFIG_MISMATCH;
    }

    /**
     * A rank refused for its configuration never retries, so the job cannot form: unless a valid join of that rank
     * arrives within the grace period (the refused one may have been a stray or hostile connection), every waiting
     * rank fails now, naming the refused rank and why, instead of at the join timeout.
     */
    private void abortUnlessJoined(int rank, String why) {
        if (rank < 1 || rank >= cfg.size() || membership != null || closing) {
            return;
        }
        loop.schedule(() -> {
            if (membership != null || closing || registered[rank] != null || joinResult == null || joinResult.isDone()) {
                return;
            }
            String message = "job aborted: rank " + rank + " was refused and did not join within " + abortGraceMillis
                + " ms: " + why;
            for (Conn c : List.copyOf(conns)) {
                if (c.state == State.REGISTERED) {
                    c.refuse(JoinRefusedException.Reason.JOB_ABORTED, message);
                }
            }
            joinTimer.cancel(false);
            server.close();
            joinResult.completeExceptionally(new JoinRefusedException(JoinRefusedException.Reason.JOB_ABORTED, 0, message));
        }, abortGraceMillis, TimeUnit.MILLISECONDS);
    }

    private void joinTimedOut() {
        if (membership != null || joinResult.isDone()) {
            return;
        }
        List<Integer> missing = new ArrayList<>();
        for (int r = 1; r < cfg.size(); r++) {
            if (registered[r] == null) {
                missing.add(r);
            }
        }
        joinResult.completeExceptionally(new ControlPlaneException("coordinator " + server.localAddress() + ": "
            + (cfg.size() - missing.size()) + " of " + cfg.size() + " ranks joined within "
            + cfg.joinTimeout().toMillis() + " ms; missing ranks " + missing));
    }

    private void maybeForm() {
        if (joinResult == null || membership != null || registeredCount < cfg.size() - 1) {
            return;
        }
        String host = cfg.advertisedHost() != null ? cfg.advertisedHost() : cfg.coordinatorHost();
        registered[0] = new Membership.Member(0, host, ProcessHandle.current().pid(), ownDescriptors);
        membership = new Membership(cfg.threadsPerProcess(), List.of(registered));
        cp.membershipFormed(membership);
        joinTimer.cancel(false);
        long now = System.nanoTime();
        ByteBuf encoded = ControlProtocol.membership(server.alloc(), membership);
        try {
            for (int r = 1; r < cfg.size(); r++) {
                Conn c = claimed[r];
                c.state = State.RUNNING;
                c.lastSeenNanos = now;
                c.ch.writeAndFlush(encoded.retainedDuplicate());
            }
        } finally {
            encoded.release();
        }
        lastTickNanos = now;
        long period = cfg.heartbeatInterval().toNanos();
        heartbeatTask = loop.scheduleAtFixedRate(this::tick, period, period, TimeUnit.NANOSECONDS);
        LOG.debug("coordinator: job of {} formed: {}", cfg.size(), membership);
        server.close(); // no joins after this one: nothing listens while the job runs (members keep their connections)
        joinResult.complete(membership);
    }

    // ------------------------------------------------------------------------------------------ running

    private void tick() {
        long now = System.nanoTime();
        boolean stalled = now - lastTickNanos > failureTimeoutNanos / 2;
        lastTickNanos = now;
        for (int r = 1; r < cfg.size(); r++) {
            Conn c = claimed[r];
            if (c == null || c.state != State.RUNNING || !cp.isAlive(r)) {
                continue;
            }
            if (stalled) {
                // This process was not scheduled for a while: peers are not to blame, restart their clocks.
                c.lastSeenNanos = Math.max(c.lastSeenNanos, now);
            } else if (now - c.lastSeenNanos > failureTimeoutNanos) {
                declareFailed(r, "no heartbeat for " + (now - c.lastSeenNanos) / 1_000_000 + " ms (failure timeout "
                    + cfg.failureTimeout().toMillis() + " ms)");
                continue;
            }
            if (!muted) {
                c.ch.writeAndFlush(empty(c.ch.alloc(), HEARTBEAT), c.ch.voidPromise());
                cp.counters.heartbeatsSent++;
            }
        }
    }

    private void declareFailed(int rank, String reason) {
        if (!cp.depart(rank, reason, false, null)) {
            return;
        }
        broadcast(rank, ch -> peerFailed(ch.alloc(), rank, reason));
        Conn c = claimed[rank];
        if (c != null) {
            c.state = State.DONE;
            c.ch.close();
        }
        checkBarrier();
    }

    private void memberLeft(int rank) {
        if (!cp.depart(rank, "closed its control plane", true, null)) {
            return;
        }
        broadcast(rank, ch -> peerLeft(ch.alloc(), rank));
        checkBarrier();
    }

    /** Sends to every running member except {@code except}. */
    private List<ChannelFuture> broadcast(int except, java.util.function.Function<Channel, ByteBuf> message) {
        List<ChannelFuture> writes = new ArrayList<>();
        for (int r = 1; r < cfg.size(); r++) {
            Conn c = claimed[r];
            if (r != except && c != null && c.state == State.RUNNING && cp.isAlive(r)) {
                writes.add(c.ch.writeAndFlush(message.apply(c.ch)));
            }
        }
        return writes;
    }

    // ------------------------------------------------------------------------------------------ shutdown

    @Override
    public void shutdown(CompletableFuture<Void> done) {
        shutdownResult = done;
        arrived[0] = true;
        checkBarrier();
    }

    private void checkBarrier() {
        if (shutdownResult == null || released) {
            return;
        }
        for (int r = 1; r < cfg.size(); r++) {
            if (!arrived[r] && cp.isAlive(r)) {
                return;
            }
        }
        released = true;
        heartbeatTask.cancel(false);
        List<ChannelFuture> writes = broadcast(-1, ch -> empty(ch.alloc(), SHUTDOWN_RELEASE));
        for (int r = 1; r < cfg.size(); r++) {
            if (claimed[r] != null) {
                claimed[r].state = State.DONE;
            }
        }
        LOG.debug("coordinator: shutdown barrier released");
        cp.jobShutdown();
        Promise<Void> all = loop.newPromise();
        PromiseCombiner combiner = new PromiseCombiner(loop);
        writes.forEach(combiner::add);
        combiner.finish(all);
        all.addListener(f -> shutdownResult.complete(null));
    }

    @Override
    public String shutdownWaitDescription() {
        List<Integer> missing = new ArrayList<>();
        for (int r = 1; r < cfg.size(); r++) {
            if (!arrived[r] && cp.isAlive(r)) {
                missing.add(r);
            }
        }
        return "ranks not at the barrier: " + missing;
    }

    // ------------------------------------------------------------------------------------------ close

    @Override
    public void close(Promise<Void> done) {
        closing = true;
        if (joinTimer != null) {
            joinTimer.cancel(false);
        }
        if (heartbeatTask != null) {
            heartbeatTask.cancel(false);
        }
        if (joinResult != null && !joinResult.isDone()) {
            joinResult.completeExceptionally(new ControlPlaneException("rank 0: control plane closed during join"));
        }
        if (shutdownResult != null && !shutdownResult.isDone()) {
            shutdownResult.completeExceptionally(new ControlPlaneException("rank 0: control plane closed"));
        }
        PromiseCombiner combiner = new PromiseCombiner(loop);
        for (Conn c : List.copyOf(conns)) {
            if (membership != null && !released && c.state == State.RUNNING) {
                // Orderly departure of the coordinator: members learn it was not a crash.
                c.state = State.DONE;
                combiner.add(c.ch.writeAndFlush(empty(c.ch.alloc(), LEAVE))
                    .addListener(ChannelFutureListener.CLOSE));
            } else {
                c.state = State.DONE;
                combiner.add(c.ch.close());
            }
        }
        combiner.add(server.close());
        combiner.finish(done);
    }

    @Override
    public void abort() {
        closing = true;
        if (heartbeatTask != null) {
            heartbeatTask.cancel(false);
        }
        for (Conn c : List.copyOf(conns)) {
            c.state = State.DONE;
            c.ch.close();
        }
        server.close();
    }

    @Override
    public void muteHeartbeats() {
        muted = true;
    }

    /** Caps connections still in the handshake (an unauthenticated flood must not starve real joins of fds). */
    private void dropOldestPendingIfOver(Conn newest) {
        String host = hostOf(newest.ch);
        int pending = 0;
        int fromHost = 0;
        Conn oldest = null;
        Conn oldestFromHost = null;
        for (Conn c : conns) {
            if (c.state.compareTo(State.REGISTERED) >= 0) {
                continue; // registered, running or done
            }
            pending++;
            oldest = oldest == null ? c : oldest;
            if (host.equals(hostOf(c.ch))) {
                fromHost++;
                oldestFromHost = oldestFromHost == null ? c : oldestFromHost;
            }
        }
        Conn drop = fromHost > maxPendingJoinsPerHost ? oldestFromHost : pending > maxPendingJoins ? oldest : null;
        if (drop != null) {
            drop.refuse(JoinRefusedException.Reason.PROTOCOL, "too many connections still in the handshake ("
                + fromHost + " from " + host + ", " + pending + " in all; limits fabricrpc.maxPendingJoinsPerHost="
                + maxPendingJoinsPerHost + ", fabricrpc.maxPendingJoins=" + maxPendingJoins + "): the oldest is dropped");
        }
    }

    private static String hostOf(Channel ch) {
        return ch.remoteAddress() instanceof InetSocketAddress a ? String.valueOf(a.getAddress()) : String.valueOf(ch.remoteAddress());
    }

    // ------------------------------------------------------------------------------------------ per connection

    private enum State { HELLO, AUTH, REGISTER, REGISTERED, RUNNING, DONE }

    /** One member connection; confined to the event loop. */
    private final class Conn extends SimpleChannelInboundHandler<ByteBuf> {
        final BoundedFrameDecoder decoder = new BoundedFrameDecoder();
        State state = State.HELLO;
        Channel ch;
        String remote = "?";
        Hello hello;
        byte[] nonceC;
        int rank = -1;
        long lastSeenNanos;
        boolean left;
        ScheduledFuture<?> handshakeTimer;

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            ch = ctx.channel();
            remote = String.valueOf(ch.remoteAddress());
            if (closing) {
                ch.close();
                return;
            }
            conns.add(this);
            dropOldestPendingIfOver(this);
            long limit = Math.min(MAX_HANDSHAKE_MILLIS, cfg.joinTimeout().toMillis());
            handshakeTimer = loop.schedule(() -> {
                if (state.compareTo(State.REGISTERED) < 0) {
                    refuse(JoinRefusedException.Reason.PROTOCOL, "handshake not completed within " + limit + " ms");
                }
            }, limit, TimeUnit.MILLISECONDS);
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf in) {
            if (state == State.DONE) {
                return;
            }
            byte type = in.readByte();
            try {
                switch (state) {
                    case HELLO -> onHello(type, in);
                    case AUTH -> onAuth(type, in);
                    case REGISTER -> onRegister(type, in);
                    case REGISTERED -> {
                        if (type != LEAVE) {
                            throw new ProtocolException("unexpected message type " + type + " before the job formed");
                        }
                        state = State.DONE;
                        ch.close();
                    }
                    case RUNNING -> onRunning(type, in);
                    default -> { }
                }
            } catch (ProtocolException e) {
                protocolError(e.getMessage());
            }
        }

        private void onHello(byte type, ByteBuf in) {
            if (type != ControlProtocol.HELLO) {
                throw new ProtocolException("expected HELLO, got message type " + type);
            }
            hello = readHello(in);
            rank = hello.rank();
            if (hello.magic() != MAGIC) {
                throw new ProtocolException(String.format("protocol magic 0x%08x, expected 0x%08x", hello.magic(), MAGIC));
            }
            nonceC = new byte[NONCE_BYTES];
            random.nextBytes(nonceC);
            state = State.AUTH;
            ch.writeAndFlush(challenge(ch.alloc(), nonceC));
        }

        private void onAuth(byte type, ByteBuf in) {
            if (type != ControlProtocol.AUTH) {
                throw new ProtocolException("expected AUTH, got message type " + type);
            }
            byte[] mac = readAuth(in);
            String who = "coordinator " + server.localAddress() + " refused rank " + rank + ": ";
            if (!hello.hasSecret() || mac == null) {
                refuse(JoinRefusedException.Reason.MISSING_SECRET, who + "no job secret presented (set "
                    + JobConfig.ENV_JOB_SECRET + " or " + JobConfig.ENV_JOB_SECRET_FILE + ")");
                return;
            }
            byte[] expected = ControlProtocol.mac(secret, (byte) 'M', hello.rank(), hello.size(), hello.threads(),
                hello.nonceM(), nonceC);
            if (!macMatches(expected, mac)) {
                refuse(JoinRefusedException.Reason.WRONG_SECRET, who
                    + "authentication failed: the job secret does not match");
                return;
            }
            // Authenticated: only now reveal what is wrong with the claim.
            if (hello.size() != cfg.size() || hello.threads() != cfg.threadsPerProcess()) {
                refuse(JoinRefusedException.Reason.CONFIG_MISMATCH, who + "joiner has size=" + hello.size()
                    + " threadsPerProcess=" + hello.threads() + ", coordinator has size=" + cfg.size()
                    + " threadsPerProcess=" + cfg.threadsPerProcess());
                return;
            }
            if (rank <= 0 || rank >= cfg.size()) {
                refuse(JoinRefusedException.Reason.BAD_RANK, who + "rank must be in [1, " + cfg.size()
                    + ") (rank 0 is the coordinator itself)");
                return;
            }
            if (membership != null) {
                refuse(JoinRefusedException.Reason.JOB_ALREADY_FORMED, who + "the job of " + cfg.size()
                    + " has already formed");
                return;
            }
            if (claimed[rank] != null) {
                refuse(JoinRefusedException.Reason.DUPLICATE_RANK, who + "rank " + rank + " is already held by "
                    + claimed[rank].remote);
                return;
            }
            claimed[rank] = this;
            decoder.authenticated();
            state = State.REGISTER;
            ch.writeAndFlush(accept(ch.alloc(), ControlProtocol.mac(secret, (byte) 'C', hello.rank(), hello.size(),
                hello.threads(), hello.nonceM(), nonceC)));
        }

        private void onRegister(byte type, ByteBuf in) {
            if (type != REGISTER) {
                throw new ProtocolException("expected REGISTER, got message type " + type);
            }
            Register reg = readRegister(in);
            String host = reg.host().isEmpty() ? ((InetSocketAddress) ch.remoteAddress()).getAddress().getHostAddress()
                : reg.host();
            registered[rank] = new Membership.Member(rank, host, reg.pid(), reg.descriptors());
            registeredCount++;
            state = State.REGISTERED;
            handshakeTimer.cancel(false);
            LOG.debug("coordinator: rank {} joined from {} ({} of {})", rank, remote, registeredCount + 1, cfg.size());
            maybeForm();
        }

        private void onRunning(byte type, ByteBuf in) {
            lastSeenNanos = System.nanoTime();
            switch (type) {
                case HEARTBEAT -> cp.counters.heartbeatsReceived++; // event loop
                case LEAVE -> {
                    left = true;
                    state = State.DONE;
                    memberLeft(rank);
                    ch.close();
                }
                case SHUTDOWN_ARRIVE -> {
                    arrived[rank] = true;
                    checkBarrier();
                }
                default -> throw new ProtocolException("unexpected message type " + type + " from rank " + rank);
            }
        }

        private void refuse(JoinRefusedException.Reason reason, String message) {
            if (state == State.DONE) {
                return;
            }
            releaseClaim();
            state = State.DONE;
            cp.refused(new JoinRefusal(remote, hello == null ? -1 : hello.rank(), reason, message));
            ch.writeAndFlush(ControlProtocol.refuse(ch.alloc(), reason, message)).addListener(ChannelFutureListener.CLOSE);
            if (hello != null && isMisconfiguration(reason)) {
                abortUnlessJoined(hello.rank(), message);
            }
        }

        private void protocolError(String message) {
            if (state == State.RUNNING) {
                declareFailed(rank, "protocol error on its control connection: " + message);
            } else if (state != State.DONE && state != State.REGISTERED) {
                refuse(JoinRefusedException.Reason.PROTOCOL, "coordinator " + server.localAddress()
                    + " refused the connection: " + message);
            } else {
                releaseClaim();
                state = State.DONE;
                ch.close();
            }
        }

        private void releaseClaim() {
            if (membership == null && rank > 0 && rank < cfg.size() && claimed[rank] == this) {
                claimed[rank] = null;
                if (registered[rank] != null) {
                    registered[rank] = null;
                    registeredCount--;
                    LOG.info("coordinator: rank {} ({}) disconnected before the job formed; rank is free again",
                        rank, remote);
                }
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            conns.remove(this);
            if (handshakeTimer != null) {
                handshakeTimer.cancel(false);
            }
            if (state == State.RUNNING && !left && !released && !closing) {
                state = State.DONE;
                declareFailed(rank, "control connection from " + remote
                    + " closed without leave (process exited or crashed)");
            } else if (!closing) {
                releaseClaim();
            }
            state = State.DONE;
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            LOG.debug("coordinator: error on connection from {} (rank {})", remote, rank, cause);
            if (state == State.RUNNING && !closing) {
                declareFailed(rank, "control connection error: " + cause);
            } else if (state.compareTo(State.REGISTERED) < 0) {
                protocolError(String.valueOf(cause.getMessage()));
                return;
            }
            ctx.close();
        }
    }
}
