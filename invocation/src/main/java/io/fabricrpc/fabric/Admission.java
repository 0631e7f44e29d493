package io.fabricrpc.fabric;

import io.fabricrpc.api.JobConfig;
import io.fabricrpc.fabric.ControlConnection.State;

import static io.fabricrpc.fabric.ControlProtocol.*;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.EventLoop;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Rank 0's admission of joining ranks until the job forms. A joiner proves it knows the job secret before it learns
 * what is wrong with its claim (size, threads per process, a free rank in [1, size)); every refusal is sent to the
 * joiner and recorded through {@link ControlPlane#refused}, which rate-limits the log. Connections still in the
 * handshake are capped and timed out. Invariant: {@code claimed[r]} is rank r's one authenticated connection,
 * {@code registered[r]} is set only while r is claimed, and the job may form once ranks 1..size-1 all registered.
 * Everything except the constructor runs on the event loop.
 */
final class Admission {

    // The coordinator's logger: these lines were always the coordinator's, and log configurations name it.
    private static final Log LOG = Log.of(Coordinator.class);
    /**
     * A connection that has not completed the handshake by then is refused, so that half-open connections cannot pile
     * up (capped by the join timeout). Slow hosts (an emulated test bed) raise it with this system property.
     */
    private static final long MAX_HANDSHAKE_MILLIS = Long.getLong("fabricrpc.handshakeTimeoutMillis", 10_000);

    // Final, set by the constructing thread before the coordinator binds (the bind hands them to the event loop).
    private final Coordinator owner;
    private final ControlPlane cp;
    private final JobConfig cfg;
    private final EventLoop loop;
    private final byte[] secret;
    /** How long a refused rank has to join validly before the whole join is aborted (a system property for tests). */
    private final long abortGraceMillis = Long.getLong("fabricrpc.joinAbortGraceMillis", 1_000);
    /** Connections still in the handshake, in all and per source host; beyond either the oldest is dropped. */
    private final int maxPendingJoins;
    private final int maxPendingJoinsPerHost;

    // Event loop only (its scheduled tasks included).
    private final SecureRandom random = new SecureRandom();
    /** Authenticated connection per rank (index 0 unused); after the job formed, the running member's connection. */
    private final ControlConnection[] claimed;
    private final Membership.Member[] registered;
    private int registeredCount;

    Admission(Coordinator owner, ControlPlane cp, JobConfig cfg, EventLoop loop) {
        this.owner = owner;
        this.cp = cp;
        this.cfg = cfg;
        this.loop = loop;
        this.secret = cfg.jobSecret();
        this.claimed = new ControlConnection[cfg.size()];
        this.registered = new Membership.Member[cfg.size()];
        this.maxPendingJoins = Integer.getInteger("fabricrpc.maxPendingJoins", Math.max(64, 2 * cfg.size()));
        this.maxPendingJoinsPerHost = Integer.getInteger("fabricrpc.maxPendingJoinsPerHost", Math.max(16, cfg.size()));
    }

    /** The authenticated connection of {@code rank}, or null. */
    ControlConnection claimed(int rank) {
        return claimed[rank];
    }

    /** True once every rank but the coordinator registered: the job can form. */
    boolean allRegistered() {
        return registeredCount >= cfg.size() - 1;
    }

    /** The membership of every registered rank plus the coordinator's own entry {@code self}; once, at forming. */
    Membership form(Membership.Member self) {
        registered[0] = self;
        return new Membership(cfg.threadsPerProcess(), List.of(registered));
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

    List<Integer> missingRanks() {
        List<Integer> missing = new ArrayList<>();
        for (int r = 1; r < cfg.size(); r++) {
            if (registered[r] == null) {
                missing.add(r);
            }
        }
        return missing;
    }

    // ------------------------------------------------------------------------------------------ handshake

    /** A new connection {@code c}, already in {@code conns}: caps the handshakes and starts c's deadline. */
    void admit(ControlConnection c, Collection<ControlConnection> conns) {
        dropOldestPendingIfOver(c, conns);
        long limit = Math.min(MAX_HANDSHAKE_MILLIS, cfg.joinTimeout().toMillis());
        c.handshakeTimer = loop.schedule(() -> {
            if (c.state.compareTo(State.REGISTERED) < 0) {
                refuse(c, JoinRefusedException.Reason.PROTOCOL, "handshake not completed within " + limit + " ms");
            }
        }, limit, TimeUnit.MILLISECONDS);
    }

    void onHello(ControlConnection c, byte type, ByteBuf in) {
        if (type != ControlProtocol.HELLO) {
            throw new ProtocolException("expected HELLO, got message type " + type);
        }
        c.hello = readHello(in);
        c.rank = c.hello.rank();
        if (c.hello.magic() != MAGIC) {
            throw new ProtocolException(String.format("protocol magic 0x%08x, expected 0x%08x", c.hello.magic(), MAGIC));
        }
        c.nonceC = new byte[NONCE_BYTES];
        random.nextBytes(c.nonceC);
        c.state = State.AUTH;
        c.ch.writeAndFlush(challenge(c.ch.alloc(), c.nonceC));
    }

    void onAuth(ControlConnection c, byte type, ByteBuf in) {
        if (type != ControlProtocol.AUTH) {
            throw new ProtocolException("expected AUTH, got message type " + type);
        }
        byte[] mac = readAuth(in);
        Hello hello = c.hello;
        int rank = c.rank;
        String who = "coordinator " + owner.serverAddress() + " refused rank " + rank + ": ";
        if (!hello.hasSecret() || mac == null) {
            refuse(c, JoinRefusedException.Reason.MISSING_SECRET, who + "no job secret presented (set "
                + JobConfig.ENV_JOB_SECRET + " or " + JobConfig.ENV_JOB_SECRET_FILE + ")");
            return;
        }
        byte[] expected = ControlProtocol.mac(secret, (byte) 'M', hello.rank(), hello.size(), hello.threads(),
            hello.nonceM(), c.nonceC);
        if (!macMatches(expected, mac)) {
            refuse(c, JoinRefusedException.Reason.WRONG_SECRET, who
                + "authentication failed: the job secret does not match");
            return;
        }
        // Authenticated: only now reveal what is wrong with the claim.
        if (hello.size() != cfg.size() || hello.threads() != cfg.threadsPerProcess()) {
            refuse(c, JoinRefusedException.Reason.CONFIG_MISMATCH, who + "joiner has size=" + hello.size()
                + " threadsPerProcess=" + hello.threads() + ", coordinator has size=" + cfg.size()
                + " threadsPerProcess=" + cfg.threadsPerProcess());
            return;
        }
        if (rank <= 0 || rank >= cfg.size()) {
            refuse(c, JoinRefusedException.Reason.BAD_RANK, who + "rank must be in [1, " + cfg.size()
                + ") (rank 0 is the coordinator itself)");
            return;
        }
        if (owner.formed()) {
            refuse(c, JoinRefusedException.Reason.JOB_ALREADY_FORMED, who + "the job of " + cfg.size()
                + " has already formed");
            return;
        }
        if (claimed[rank] != null) {
            refuse(c, JoinRefusedException.Reason.DUPLICATE_RANK, who + "rank " + rank + " is already held by "
                + claimed[rank].remote);
            return;
        }
        claimed[rank] = c;
        c.decoder.authenticated();
        c.state = State.REGISTER;
        c.ch.writeAndFlush(accept(c.ch.alloc(), ControlProtocol.mac(secret, (byte) 'C', hello.rank(), hello.size(),
            hello.threads(), hello.nonceM(), c.nonceC)));
    }

    void onRegister(ControlConnection c, byte type, ByteBuf in) {
        if (type != REGISTER) {
            throw new ProtocolException("expected REGISTER, got message type " + type);
        }
        Register reg = readRegister(in);
        String host = reg.host().isEmpty() ? ((InetSocketAddress) c.ch.remoteAddress()).getAddress().getHostAddress()
            : reg.host();
        registered[c.rank] = new Membership.Member(c.rank, host, reg.pid(), reg.descriptors());
        registeredCount++;
        c.state = State.REGISTERED;
        c.handshakeTimer.cancel(false);
        LOG.debug("coordinator: rank {} joined from {} ({} of {})", c.rank, c.remote, registeredCount + 1, cfg.size());
        owner.maybeForm();
    }

    // ------------------------------------------------------------------------------------------ refusals

    /** Refuses {@code c}: frees its rank, records the refusal, tells the joiner and closes. Idempotent. */
    void refuse(ControlConnection c, JoinRefusedException.Reason reason, String message) {
        if (c.state == State.DONE) {
            return;
        }
        releaseClaim(c);
        c.state = State.DONE;
        cp.refused(new JoinRefusal(c.remote, c.hello == null ? -1 : c.hello.rank(), reason, message));
        c.ch.writeAndFlush(ControlProtocol.refuse(c.ch.alloc(), reason, message)).addListener(ChannelFutureListener.CLOSE);
        if (c.hello != null && isMisconfiguration(reason)) {
            abortUnlessJoined(c.hello.rank(), message);
        }
    }

    /** Before the job formed, a connection that goes away gives its rank back for another join. */
    void releaseClaim(ControlConnection c) {
        int rank = c.rank;
        if (!owner.formed() && rank > 0 && rank < cfg.size() && claimed[rank] == c) {
            claimed[rank] = null;
            if (registered[rank] != null) {
                registered[rank] = null;
                registeredCount--;
                LOG.info("coordinator: rank {} ({}) disconnected before the job formed; rank is free again",
                    rank, c.remote);
            }
        }
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
        if (rank < 1 || rank >= cfg.size() || owner.formed() || owner.isClosing()) {
            return;
        }
        loop.schedule(() -> {
            if (registered[rank] == null) {
                owner.abortJoin("job aborted: rank " + rank + " was refused and did not join within "
                    + abortGraceMillis + " ms: " + why);
            }
        }, abortGraceMillis, TimeUnit.MILLISECONDS);
    }

    /** Caps connections still in the handshake (an unauthenticated flood must not starve real joins of fds). */
    private void dropOldestPendingIfOver(ControlConnection newest, Collection<ControlConnection> conns) {
        String host = hostOf(newest.ch);
        int pending = 0;
        int fromHost = 0;
        ControlConnection oldest = null;
        ControlConnection oldestFromHost = null;
        for (ControlConnection c : conns) {
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
        ControlConnection drop = fromHost > maxPendingJoinsPerHost ? oldestFromHost : pending > maxPendingJoins ? oldest : null;
        if (drop != null) {
            refuse(drop, JoinRefusedException.Reason.PROTOCOL, "too many connections still in the handshake ("
                + fromHost + " from " + host + ", " + pending + " in all; limits fabricrpc.maxPendingJoinsPerHost="
                + maxPendingJoinsPerHost + ", fabricrpc.maxPendingJoins=" + maxPendingJoins + "): the oldest is dropped");
        }
    }

    private static String hostOf(Channel ch) {
        return ch.remoteAddress() instanceof InetSocketAddress a ? String.valueOf(a.getAddress()) : String.valueOf(ch.remoteAddress());
    }
}
