package io.fabricrpc.fabric;

import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.api.JobConfig;
import io.fabricrpc.api.ControlPlaneException;

import static io.fabricrpc.fabric.ControlProtocol.*;

import io.netty.bootstrap.Bootstrap;
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
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.LengthFieldPrepender;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import java.security.SecureRandom;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** A non-zero rank's side of the control plane. Everything except the constructor runs on the event loop. */
final class Member implements ControlPlane.Role {

    private static final Log LOG = Log.of(Member.class);
    /*
     * Ranks start together and rank 0 binds last-ish (it loads the most): a refused connect costs a SYN and a RST,
     * so retry often; with 500 ms steps a member waited up to that long after the coordinator was up.
     */
    private static final long FIRST_RETRY_MILLIS = 10;
    private static final long MAX_RETRY_MILLIS = 100;

    private enum State { IDLE, CONNECTING, HELLO_SENT, AUTH_SENT, REGISTERED, RUNNING, DONE }

    private final ControlPlane cp;
    private final JobConfig cfg;
    private final EventLoop loop;
    private final byte[] secret;
    private final String coordinator;
    private final long failureTimeoutNanos;
    private final SecureRandom random = new SecureRandom();

    private State state = State.IDLE;
    private Channel ch;
    private Handler handler;
    private Map<String, byte[]> descriptors;
    private CompletableFuture<Membership> joinResult;
    private CompletableFuture<Void> shutdownResult;
    private long deadlineNanos;
    private long retryMillis = FIRST_RETRY_MILLIS;
    private int attempts;
    private Throwable lastConnectError;
    private ScheduledFuture<?> joinTimer;
    private ScheduledFuture<?> heartbeatTask;
    private long lastSeenNanos;
    private long lastTickNanos;
    private boolean closing;
    private boolean muted;
    private byte[] nonceM;
    private byte[] expectedMacC;

    Member(ControlPlane cp, JobConfig cfg, EventLoop loop) {
        this.cp = cp;
        this.cfg = cfg;
        this.loop = loop;
        this.secret = cfg.jobSecret();
        this.coordinator = cfg.coordinatorHost() + ":" + cfg.coordinatorPort();
        this.failureTimeoutNanos = cfg.failureTimeout().toNanos();
    }

    private String me() {
        return "rank " + cfg.rank();
    }

    // ------------------------------------------------------------------------------------------ join

    @Override
    public void join(Map<String, byte[]> descriptors, CompletableFuture<Membership> result) {
        this.descriptors = descriptors;
        this.joinResult = result;
        if (closing) {
            failJoin(new ControlPlaneException(me() + ": control plane closed"));
            return;
        }
        deadlineNanos = System.nanoTime() + cfg.joinTimeout().toNanos();
        joinTimer = loop.schedule(this::joinTimedOut, cfg.joinTimeout().toMillis(), TimeUnit.MILLISECONDS);
        connect();
    }

    private void joinTimedOut() {
        if (joinResult.isDone()) {
            return;
        }
        if (state == State.CONNECTING || state == State.IDLE) {
            failJoin(new ControlPlaneException(me() + " could not reach the coordinator at " + coordinator + " within "
                + cfg.joinTimeout().toMillis() + " ms (" + attempts + " attempts, last error: " + lastConnectError
                + ")", lastConnectError));
        } else if (state == State.REGISTERED) {
            failJoin(new ControlPlaneException(me() + " registered with the coordinator at " + coordinator
                + " but the membership was not handed out within " + cfg.joinTimeout().toMillis()
                + " ms (other ranks missing?)"));
        } else {
            failJoin(new ControlPlaneException(me() + ": handshake with the coordinator at " + coordinator
                + " did not complete within " + cfg.joinTimeout().toMillis() + " ms (state " + state + ")"));
        }
        if (ch != null) {
            ch.close();
        }
    }

    private void connect() {
        if (closing || joinResult.isDone()) {
            return;
        }
        state = State.CONNECTING;
        attempts++;
        long remainingMillis = Math.max(1, (deadlineNanos - System.nanoTime()) / 1_000_000);
        Handler h = new Handler();
        Bootstrap b = new Bootstrap()
            .group(loop)
            .channel(NioSocketChannel.class)
            .option(ChannelOption.TCP_NODELAY, true)
            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(remainingMillis, 2000))
            .handler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel c) {
                    c.pipeline().addLast(h.decoder, new LengthFieldPrepender(LENGTH_FIELD_BYTES), h);
                }
            });
        b.connect(cfg.coordinatorHost(), cfg.coordinatorPort()).addListener((ChannelFuture f) -> {
            if (f.isSuccess()) {
                if (closing || joinResult.isDone()) {
                    f.channel().close();
                    return;
                }
                ch = f.channel();
                handler = h;
                sendHello();
                return;
            }
            lastConnectError = f.cause();
            long left = (deadlineNanos - System.nanoTime()) / 1_000_000;
            if (left > retryMillis) {
                LOG.debug("{}: coordinator {} not reachable yet ({}); retrying in {} ms", me(), coordinator,
                    f.cause().toString(), retryMillis);
                loop.schedule(this::connect, retryMillis, TimeUnit.MILLISECONDS);
                retryMillis = Math.min(MAX_RETRY_MILLIS, retryMillis * 2);
            } else {
                joinTimedOut();
            }
        });
    }

    private void sendHello() {
        nonceM = new byte[NONCE_BYTES];
        random.nextBytes(nonceM);
        state = State.HELLO_SENT;
        ch.writeAndFlush(hello(ch.alloc(), cfg.rank(), cfg.size(), cfg.threadsPerProcess(), secret != null, nonceM));
    }

    private void failJoin(RuntimeException e) {
        if (joinResult != null && joinResult.completeExceptionally(e)) {
            if (joinTimer != null) {
                joinTimer.cancel(false);
            }
            if (!closing) {
                LOG.warn("{}: join failed: {}", me(), e.getMessage());
            }
        }
        state = State.DONE;
    }

    // ------------------------------------------------------------------------------------------ running

    private void tick() {
        long now = System.nanoTime();
        boolean stalled = now - lastTickNanos > failureTimeoutNanos / 2;
        lastTickNanos = now;
        if (state != State.RUNNING) {
            return;
        }
        if (stalled) {
            // This process was not scheduled for a while: do not blame the coordinator for it.
            lastSeenNanos = Math.max(lastSeenNanos, now);
        } else if (now - lastSeenNanos > failureTimeoutNanos) {
            coordinatorLost("no heartbeat from the coordinator at " + coordinator + " for "
                + (now - lastSeenNanos) / 1_000_000 + " ms (failure timeout " + cfg.failureTimeout().toMillis()
                + " ms)", false);
            ch.close();
            return;
        }
        if (!muted) {
            ch.writeAndFlush(empty(ch.alloc(), HEARTBEAT), ch.voidPromise());
            cp.counters.heartbeatsSent++;
        }
    }

    /** The coordinator is gone: rank 0 departed, and nobody watches the others any more. */
    private void coordinatorLost(String reason, boolean orderly) {
        state = State.DONE;
        if (heartbeatTask != null) {
            heartbeatTask.cancel(false);
        }
        cp.depart(0, reason, orderly, null);
        for (int r = 1; r < cfg.size(); r++) {
            if (r != cfg.rank()) {
                cp.depart(r, "liveness unknown: lost the coordinator (rank 0) that monitors it: " + reason, false, null);
            }
        }
        if (shutdownResult != null) {
            shutdownResult.completeExceptionally(new PeerFailedException(0, reason, orderly));
        }
    }

    // ------------------------------------------------------------------------------------------ shutdown, close

    @Override
    public void shutdown(CompletableFuture<Void> done) {
        if (state != State.RUNNING) {
            PeerFailedException gone = cp.departure(0);
            done.completeExceptionally(gone != null ? new PeerFailedException(0, gone.reason(),
                gone.isOrderlyDeparture(), gone) : new IllegalStateException(me() + ": not running (" + state + ")"));
            return;
        }
        shutdownResult = done;
        ch.writeAndFlush(empty(ch.alloc(), SHUTDOWN_ARRIVE));
    }

    @Override
    public String shutdownWaitDescription() {
        return "waiting for the coordinator at " + coordinator + " to release the barrier (state " + state + ")";
    }

    @Override
    public void close(Promise<Void> done) {
        closing = true;
        if (heartbeatTask != null) {
            heartbeatTask.cancel(false);
        }
        failJoin(new ControlPlaneException(me() + ": control plane closed during join"));
        if (shutdownResult != null && !shutdownResult.isDone()) {
            shutdownResult.completeExceptionally(new ControlPlaneException(me() + ": control plane closed"));
        }
        if (ch == null || !ch.isOpen()) {
            done.setSuccess(null);
            return;
        }
        ChannelFuture closed;
        if (handler != null && handler.running) {
            closed = ch.writeAndFlush(empty(ch.alloc(), LEAVE)).addListener(ChannelFutureListener.CLOSE)
                .channel().closeFuture();
        } else {
            closed = ch.close();
        }
        state = State.DONE;
        closed.addListener(f -> done.setSuccess(null));
    }

    @Override
    public void abort() {
        closing = true;
        if (heartbeatTask != null) {
            heartbeatTask.cancel(false);
        }
        if (ch != null) {
            ch.close();
        }
    }

    @Override
    public void muteHeartbeats() {
        muted = true;
    }

    // ------------------------------------------------------------------------------------------ the connection

    private final class Handler extends SimpleChannelInboundHandler<ByteBuf> {
        final BoundedFrameDecoder decoder = new BoundedFrameDecoder();
        boolean running;

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf in) {
            if (state == State.DONE) {
                return;
            }
            byte type = in.readByte();
            try {
                if (type == REFUSE && state != State.RUNNING) {
                    Refuse r = readRefuse(in);
                    failJoin(new JoinRefusedException(r.reason(), cfg.rank(), r.message()));
                    ctx.close();
                    return;
                }
                switch (state) {
                    case HELLO_SENT -> onChallenge(type, in);
                    case AUTH_SENT -> onAccept(type, in);
                    case REGISTERED -> onMembership(type, in);
                    case RUNNING -> onRunning(type, in);
                    default -> { }
                }
            } catch (ProtocolException e) {
                protocolError(e.getMessage());
            }
        }

        private void onChallenge(byte type, ByteBuf in) {
            if (type != CHALLENGE) {
                throw new ProtocolException("expected CHALLENGE, got message type " + type);
            }
            byte[] nonceC = readNonce(in, "CHALLENGE");
            byte[] macM = secret == null ? null : ControlProtocol.mac(secret, (byte) 'M', cfg.rank(), cfg.size(),
                cfg.threadsPerProcess(), nonceM, nonceC);
            expectedMacC = secret == null ? null : ControlProtocol.mac(secret, (byte) 'C', cfg.rank(), cfg.size(),
                cfg.threadsPerProcess(), nonceM, nonceC);
            state = State.AUTH_SENT;
            ch.writeAndFlush(auth(ch.alloc(), macM));
        }

        private void onAccept(byte type, ByteBuf in) {
            if (type != ACCEPT) {
                throw new ProtocolException("expected ACCEPT, got message type " + type);
            }
            byte[] macC = readAccept(in);
            if (expectedMacC == null || !macMatches(expectedMacC, macC)) {
                failJoin(new JoinRefusedException(JoinRefusedException.Reason.COORDINATOR_NOT_AUTHENTIC, cfg.rank(),
                    me() + " refused the coordinator at " + coordinator
                        + ": it could not prove knowledge of the job secret"));
                ch.close();
                return;
            }
            decoder.authenticated();
            state = State.REGISTERED;
            String host = cfg.advertisedHost() != null ? cfg.advertisedHost() : "";
            ch.writeAndFlush(register(ch.alloc(), host, ProcessHandle.current().pid(), descriptors));
        }

        private void onMembership(byte type, ByteBuf in) {
            if (type != MEMBERSHIP) {
                throw new ProtocolException("expected MEMBERSHIP, got message type " + type);
            }
            Membership m = readMembership(in);
            if (m.size() != cfg.size() || m.member(cfg.rank()).pid() != ProcessHandle.current().pid()) {
                throw new ProtocolException("membership of size " + m.size() + " does not list this process as rank "
                    + cfg.rank());
            }
            cp.membershipFormed(m);
            state = State.RUNNING;
            running = true;
            long now = System.nanoTime();
            lastSeenNanos = now;
            lastTickNanos = now;
            long period = cfg.heartbeatInterval().toNanos();
            heartbeatTask = loop.scheduleAtFixedRate(Member.this::tick, period, period, TimeUnit.NANOSECONDS);
            joinTimer.cancel(false);
            LOG.debug("{}: joined job of {} via {}", me(), m.size(), coordinator);
            joinResult.complete(m);
        }

        private void onRunning(byte type, ByteBuf in) {
            lastSeenNanos = System.nanoTime();
            switch (type) {
                case HEARTBEAT -> cp.counters.heartbeatsReceived++; // event loop
                case PEER_FAILED -> {
                    PeerFailed pf = readPeerFailed(in);
                    checkRank(pf.rank());
                    cp.depart(pf.rank(), pf.reason() + " (reported by the coordinator)", false, null);
                }
                case PEER_LEFT -> {
                    int rank = readRank(in, "PEER_LEFT");
                    end(in, "PEER_LEFT");
                    checkRank(rank);
                    cp.depart(rank, "closed its control plane", true, null);
                }
                case LEAVE -> {
                    coordinatorLost("the coordinator at " + coordinator
                        + " closed its control plane without a shutdown barrier", true);
                    ch.close();
                }
                case SHUTDOWN_RELEASE -> {
                    state = State.DONE;
                    running = false;
                    heartbeatTask.cancel(false);
                    cp.jobShutdown();
                    if (shutdownResult != null) {
                        shutdownResult.complete(null);
                    }
                }
                default -> throw new ProtocolException("unexpected message type " + type + " from the coordinator");
            }
        }

        private void checkRank(int rank) {
            if (rank < 0 || rank >= cfg.size()) {
                throw new ProtocolException("rank " + rank + " outside the job of " + cfg.size());
            }
        }

        private void protocolError(String message) {
            if (state == State.RUNNING) {
                coordinatorLost("protocol error on the control connection to " + coordinator + ": " + message, false);
            } else {
                failJoin(new ControlPlaneException(me() + ": protocol error from the coordinator at " + coordinator
                    + ": " + message));
            }
            ch.close();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (closing) {
                return;
            }
            if (state == State.RUNNING) {
                coordinatorLost("control connection to the coordinator at " + coordinator
                    + " closed (coordinator exited or crashed)", false);
            } else if (joinResult != null && !joinResult.isDone()) {
                failJoin(new ControlPlaneException(me() + ": the coordinator at " + coordinator
                    + " closed the connection during the join handshake (state " + state + ")"));
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            LOG.debug("{}: error on the control connection to {}", me(), coordinator, cause);
            if (state == State.RUNNING && !closing) {
                // A reset (a killed coordinator) is worded as channelInactive words a close: the same job failure,
                // which every survivor reports alike; the cause is in the debug line above.
                coordinatorLost(cause instanceof java.io.IOException ? "control connection to the coordinator at "
                    + coordinator + " closed (coordinator exited or crashed)"
                    : "control connection error to the coordinator at " + coordinator + ": " + cause, false);
            } else if (joinResult != null && !joinResult.isDone()) {
                failJoin(new ControlPlaneException(me() + ": control connection error to " + coordinator + ": "
                    + cause, cause));
            }
            ctx.close();
        }
    }
}
