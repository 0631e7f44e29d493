package io.fabricrpc.fabric;

import io.fabricrpc.api.JobConfig;
import io.fabricrpc.api.ControlPlaneException;
import io.fabricrpc.fabric.ControlConnection.State;

import static io.fabricrpc.fabric.ControlProtocol.*;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.PromiseCombiner;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Rank 0's side of the control plane: listens for control connections (one {@link ControlConnection} each), forms the
 * membership once {@link Admission} has admitted every rank, then relays departures (found by {@link FailureDetector}
 * or by a lost connection) to the running members and holds the shutdown barrier. Nothing listens once the job
 * formed. Everything except the constructor runs on the event loop.
 */
final class Coordinator implements ControlPlane.Role {

    private static final Log LOG = Log.of(Coordinator.class);

    // Final, set by the constructing thread; the bind hands them to the event loop.
    private final ControlPlane cp;
    private final JobConfig cfg;
    private final EventLoop loop;
    private final Admission admission;
    private final FailureDetector failures;
    private final Channel server;
    private final int boundPort;

    // Event loop only.
    private final Set<ControlConnection> conns = new java.util.LinkedHashSet<>(); // in arrival order
    private Map<String, byte[]> ownDescriptors;
    private CompletableFuture<Membership> joinResult;
    private ScheduledFuture<?> joinTimer;
    private Membership membership;
    private final boolean[] arrived;
    private CompletableFuture<Void> shutdownResult;
    private boolean released;
    private boolean closing;

    Coordinator(ControlPlane cp, JobConfig cfg, EventLoop loop) {
        this.cp = cp;
        this.cfg = cfg;
        this.loop = loop;
        this.admission = new Admission(this, cp, cfg, loop);
        this.arrived = new boolean[cfg.size()];
        this.failures = new FailureDetector(this, cp, cfg, loop);
        String bindHost = bindHost(cfg);
        ServerBootstrap b = new ServerBootstrap()
            .group(loop)
            .channel(NioServerSocketChannel.class)
            .option(ChannelOption.SO_REUSEADDR, true)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel ch) {
                    ControlConnection c = new ControlConnection(Coordinator.this, admission, cp);
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
        return admission.registeredRanks();
    }

    int boundPort() {
        return boundPort;
    }

    java.net.SocketAddress serverAddress() {
        return server.localAddress();
    }

    boolean formed() {
        return membership != null;
    }

    boolean isClosing() {
        return closing;
    }

    boolean isReleased() {
        return released;
    }

    /** A new connection {@code c}: false if it comes while closing, else it is tracked and its handshake starts. */
    boolean connected(ControlConnection c) {
        if (closing) {
            return false;
        }
        conns.add(c);
        admission.admit(c, conns);
        return true;
    }

    void disconnected(ControlConnection c) {
        conns.remove(c);
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

    /** {@link Admission}'s verdict that a refused rank did not come back: every waiting rank's join fails. */
    void abortJoin(String message) {
        if (membership != null || closing || joinResult == null || joinResult.isDone()) {
            return;
        }
        for (ControlConnection c : List.copyOf(conns)) {
            if (c.state == State.REGISTERED) {
                c.refuse(JoinRefusedException.Reason.JOB_ABORTED, message);
            }
        }
        joinTimer.cancel(false);
        server.close();
        joinResult.completeExceptionally(new JoinRefusedException(JoinRefusedException.Reason.JOB_ABORTED, 0, message));
    }

    private void joinTimedOut() {
        if (membership != null || joinResult.isDone()) {
            return;
        }
        List<Integer> missing = admission.missingRanks();
        joinResult.completeExceptionally(new ControlPlaneException("coordinator " + server.localAddress() + ": "
            + (cfg.size() - missing.size()) + " of " + cfg.size() + " ranks joined within "
            + cfg.joinTimeout().toMillis() + " ms; missing ranks " + missing));
    }

    void maybeForm() {
        if (joinResult == null || membership != null || !admission.allRegistered()) {
            return;
        }
        String host = cfg.advertisedHost() != null ? cfg.advertisedHost() : cfg.coordinatorHost();
        membership = admission.form(new Membership.Member(0, host, ProcessHandle.current().pid(), ownDescriptors));
        cp.membershipFormed(membership);
        joinTimer.cancel(false);
        long now = System.nanoTime();
        ByteBuf encoded = ControlProtocol.membership(server.alloc(), membership);
        try {
            for (int r = 1; r < cfg.size(); r++) {
                ControlConnection c = admission.claimed(r);
                c.state = State.RUNNING;
                c.lastSeenNanos = now;
                c.ch.writeAndFlush(encoded.retainedDuplicate());
            }
        } finally {
            encoded.release();
        }
        failures.start(now);
        LOG.debug("coordinator: job of {} formed: {}", cfg.size(), membership);
        server.close(); // no joins after this one: nothing listens while the job runs (members keep their connections)
        joinResult.complete(membership);
    }

    // ------------------------------------------------------------------------------------------ running

    /** Rank {@code r}'s connection while r is running and alive, else null. */
    ControlConnection running(int r) {
        ControlConnection c = admission.claimed(r);
        return c != null && c.state == State.RUNNING && cp.isAlive(r) ? c : null;
    }

    void declareFailed(int rank, String reason) {
        if (!cp.depart(rank, reason, false, null)) {
            return;
        }
        broadcast(rank, ch -> peerFailed(ch.alloc(), rank, reason));
        ControlConnection c = admission.claimed(rank);
        if (c != null) {
            c.state = State.DONE;
            c.ch.close();
        }
        checkBarrier();
    }

    void memberLeft(int rank) {
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
            ControlConnection c = running(r);
            if (r != except && c != null) {
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

    void arrivedAtBarrier(int rank) {
        arrived[rank] = true;
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
        failures.stop();
        List<ChannelFuture> writes = broadcast(-1, ch -> empty(ch.alloc(), SHUTDOWN_RELEASE));
        for (int r = 1; r < cfg.size(); r++) {
            ControlConnection c = admission.claimed(r);
            if (c != null) {
                c.state = State.DONE;
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
        failures.stop();
        if (joinResult != null && !joinResult.isDone()) {
            joinResult.completeExceptionally(new ControlPlaneException("rank 0: control plane closed during join"));
        }
        if (shutdownResult != null && !shutdownResult.isDone()) {
            shutdownResult.completeExceptionally(new ControlPlaneException("rank 0: control plane closed"));
        }
        PromiseCombiner combiner = new PromiseCombiner(loop);
        for (ControlConnection c : List.copyOf(conns)) {
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
        failures.stop();
        for (ControlConnection c : List.copyOf(conns)) {
            c.state = State.DONE;
            c.ch.close();
        }
        server.close();
    }

    @Override
    public void muteHeartbeats() {
        failures.mute();
    }
}
