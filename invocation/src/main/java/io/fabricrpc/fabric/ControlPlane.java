package io.fabricrpc.fabric;

import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.api.JobConfig;
import io.fabricrpc.api.ControlPlaneException;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.Promise;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The job's bootstrap and out-of-band control channel over Netty (TCP).
 *
 * <p><b>Topology.</b> A star: rank 0 runs the coordinator, every other rank keeps one authenticated TCP connection
 * to it. The coordinator collects every process's transport descriptors and hands out the {@link Membership};
 * afterwards the same connections carry heartbeats (both directions, every
 * {@link JobConfig#heartbeatInterval()}), failure and departure notices, and the shutdown barrier.
 *
 * <p><b>Failure detection.</b> The coordinator declares rank {@code r} failed when r's connection closes without
 * an orderly {@code LEAVE} (a killed process is seen within milliseconds, the kernel closes its sockets) or when r
 * sends nothing for {@link JobConfig#failureTimeout()}; it then tells every member. A member that loses the
 * coordinator (connection closed or silent for the failure timeout) declares rank 0 failed and, since nobody
 * monitors the other ranks any more, every other rank failed with a "liveness unknown" reason, so no wait can hang.
 * A process that was itself stalled (its heartbeat tick ran late by half the failure timeout) restarts its timers
 * instead of blaming its peers.
 *
 * <p><b>Use.</b> {@link #start(JobConfig)} (rank 0 binds the coordinator port here), then
 * {@link #join(Map)}; fabric waits call {@link #checkAlive(int)}; a normal job end calls {@link #shutdown()}
 * on every rank (a barrier, so the end is not reported as failures); {@link #close()} alone is an orderly
 * departure of this process.
 *
 * <p><b>Thread-safety.</b> All methods are thread-safe. Protocol state is confined to one daemon event-loop
 * thread per instance (named {@value #THREAD_NAME_PREFIX}r&lt;rank&gt;-…); {@link #isAlive}, {@link #failure} and
 * {@link #checkAlive} are a single volatile array read.
 */
public final class ControlPlane implements AutoCloseable {

    /** Prefix of the event-loop thread names (to check for leaks). */
    public static final String THREAD_NAME_PREFIX = "fabricrpc-control-";

    private static final Log LOG = Log.of(ControlPlane.class);
    /** Why this process fail-stopped ({@link #failStop}), or null. */
    private volatile String failStopped;
    private static final long CLOSE_WAIT_MILLIS = 2000;

    private final JobConfig config;
    final ControlCounters counters;
    private final io.fabricrpc.counters.CounterSource countersView;
    private final EventLoopGroup group;
    private final EventLoop loop;
    private final Role role;
    private final Departures departures;
    private final AtomicBoolean joinCalled = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile Membership membership;

    /** What differs between the coordinator and a member; every method runs on the event loop. */
    interface Role {
        void join(Map<String, byte[]> descriptors, CompletableFuture<Membership> result);

        void shutdown(CompletableFuture<Void> done);

        /** Diagnostic for a shutdown timeout. */
        String shutdownWaitDescription();

        void close(Promise<Void> done);

        /** Test hook: drop every connection without LEAVE, as a crash would. */
        void abort();

        /** Test hook: stop sending heartbeats but keep the connections open, as a hung process would. */
        void muteHeartbeats();
    }

    private ControlPlane(JobConfig config) {
        Departures.warmUp();
        this.config = config;
        this.counters = new ControlCounters(config.rank());
        this.countersView = counters.asCounters();
        this.departures = new Departures(config.rank(), config.size(), counters);
        this.group = new NioEventLoopGroup(1, new DefaultThreadFactory(THREAD_NAME_PREFIX + "r" + config.rank(), true));
        this.loop = group.next();
        Role r = null;
        try {
            r = config.isCoordinator() ? new Coordinator(this, config, loop) : new Member(this, config, loop);
        } finally {
            if (r == null) {
                group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(CLOSE_WAIT_MILLIS);
            }
        }
        this.role = r;
    }

    /**
     * Starts the control plane of one process. Rank 0 binds the coordinator port before returning (read it with
     * {@link #coordinatorPort()} when the configured port is 0); other ranks connect in {@link #join(Map)}.
     *
     * @throws IllegalArgumentException if rank 0 has no job secret
     * @throws ControlPlaneException    if rank 0 cannot bind the coordinator address
     */
    public static ControlPlane start(JobConfig config) {
        if (config.isCoordinator() && !config.hasJobSecret()) {
            throw new IllegalArgumentException("rank 0 (coordinator) needs a job secret: set "
                + JobConfig.ENV_JOB_SECRET + " or " + JobConfig.ENV_JOB_SECRET_FILE);
        }
        return new ControlPlane(config);
    }

    /** {@link #start} then {@link #join}; closes the control plane if the join fails. */
    public static ControlPlane startAndJoin(JobConfig config, Map<String, byte[]> localDescriptors) {
        ControlPlane cp = start(config);
        try {
            cp.join(localDescriptors);
            return cp;
        } catch (RuntimeException e) {
            cp.close();
            throw e;
        }
    }

    /**
     * Publishes this process's transport descriptors and blocks until the coordinator hands out the membership,
     * at most {@link JobConfig#joinTimeout()}. Members retry connecting until the coordinator is up. Call once.
     *
     * @param localDescriptors opaque descriptors keyed by transport name (at most 64, each at most 1 MiB)
     * @return the membership, equal on every rank
     * @throws JoinRefusedException  the coordinator refused this process (wrong or missing secret, bad or
     *                               duplicate rank, size mismatch), or the coordinator could not prove the secret
     * @throws ControlPlaneException coordinator unreachable, join timeout (the message names host:port, the
     *                               missing ranks on rank 0), connection lost, or this control plane was closed
     */
    public Membership join(Map<String, byte[]> localDescriptors) {
        notOnEventLoop("join");
        if (!joinCalled.compareAndSet(false, true)) {
            throw new IllegalStateException("join already called on rank " + config.rank());
        }
        ensureOpen();
        Map<String, byte[]> copy = new TreeMap<>();
        localDescriptors.forEach((k, v) -> copy.put(k, v == null ? null : v.clone()));
        ControlProtocol.validateDescriptors(copy);
        CompletableFuture<Membership> result = new CompletableFuture<>();
        loop.execute(() -> role.join(copy, result));
        long wait = config.joinTimeout().toMillis() + CLOSE_WAIT_MILLIS;
        return await(result, wait, () -> new ControlPlaneException("rank " + config.rank()
            + ": join did not complete within " + wait + " ms (coordinator " + coordinatorDescription() + ")"));
    }

    /**
     * Orderly end of the job: blocks until every rank that has not failed or left reached {@code shutdown}, then
     * closes this control plane. Peers that fail meanwhile are excluded (they stay reported as failures).
     * Uses {@link JobConfig#joinTimeout()} as the bound.
     */
    public void shutdown() {
        shutdown(config.joinTimeout());
    }

    /**
     * {@link #shutdown()} with an explicit bound.
     *
     * @throws ControlPlaneException if the barrier did not complete in time (naming the missing ranks); the
     *                               control plane is closed anyway
     * @throws PeerFailedException   on a member, if the coordinator failed before releasing the barrier
     * @throws IllegalStateException if {@link #join} has not completed
     */
    public void shutdown(Duration timeout) {
        notOnEventLoop("shutdown");
        if (membership == null) {
            throw new IllegalStateException("shutdown before join completed on rank " + config.rank());
        }
        ensureOpen();
        CompletableFuture<Void> done = new CompletableFuture<>();
        loop.execute(() -> role.shutdown(done));
        try {
            await(done, timeout.toMillis(), () -> new ControlPlaneException("rank " + config.rank()
                + ": shutdown barrier not released within " + timeout.toMillis() + " ms; "
                + onLoop(role::shutdownWaitDescription)));
        } finally {
            close();
        }
    }

    /**
     * Leaves the job in an orderly way (peers see {@link ControlPlaneListener#peerLeft}, not a failure) and
     * releases the event-loop thread and sockets; bounded (about 2 s at worst). Afterwards every rank counts as
     * gone for this process. On rank 0 without a prior {@link #shutdown()}, members lose their coordinator.
     * Idempotent. From a listener callback it returns at once and completes on a helper thread.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (loop.inEventLoop()) {
            // Called from a listener: the event loop cannot wait for itself, so finish on a helper thread.
            Thread t = new Thread(this::closeNow, THREAD_NAME_PREFIX + "close-r" + config.rank());
            t.setDaemon(true);
            t.start();
            return;
        }
        closeNow();
    }

    private void closeNow() {
        try {
            Promise<Void> done = loop.newPromise();
            loop.execute(() -> role.close(done));
            if (!done.awaitUninterruptibly(CLOSE_WAIT_MILLIS)) {
                LOG.warn("rank {}: control connections did not close within {} ms", config.rank(), CLOSE_WAIT_MILLIS);
            }
        } catch (RuntimeException e) {
            LOG.debug("rank {}: event loop already stopped", config.rank(), e);
        } finally {
            if (!group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(CLOSE_WAIT_MILLIS + 1000)) {
                LOG.warn("rank {}: control event loop did not terminate in time", config.rank());
            }
            departures.closeAll("rank " + config.rank() + " closed its control plane");
        }
    }

    /**
     * Fail-stop of this process, which can no longer take part (its own transport memory is gone): every rank, this
     * one included, counts as gone here with {@code reason}, then the connections drop without LEAVE, so the job
     * declares this rank failed as it would a crash. Idempotent; returns at once, from any thread.
     */
    public void failStop(String reason) {
        String why = "rank " + config.rank() + " left the job as failed: " + reason;
        for (int r = 0; r < config.size(); r++) {
            depart(r, why, false, null);
        }
        if (!closed.get()) {
            failStopped = why; // before closed is set: whoever then finds it closed says why
        }
        if (closed.compareAndSet(false, true)) {
            loop.execute(role::abort);
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS); // not awaited: the caller may be the event loop
        }
    }

    /** Test hook: simulates a crash of this process (connections dropped without LEAVE), then releases threads. */
    void abortForTest() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        loop.execute(role::abort);
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(CLOSE_WAIT_MILLIS + 1000);
    }

    /** Test hook (rank 0): ranks registered so far, read on the event loop. */
    String registeredRanksForTest() {
        return onLoop(() -> role instanceof Coordinator c ? c.registeredRanks() : "");
    }

    /** Test hook: simulates a hung process (connections stay open, heartbeats stop). */
    void muteHeartbeatsForTest() {
        loop.execute(role::muteHeartbeats);
    }

    // ------------------------------------------------------------------------------------------ liveness queries

    /** True while {@code rank} has neither failed nor left (as far as this process knows). */
    public boolean isAlive(int rank) {
        return departures.get(rank) == null; // one volatile read
    }

    /** Why {@code rank} failed, or null if it is alive or left in an orderly way. */
    public PeerFailedException failure(int rank) {
        PeerFailedException d = departures.get(rank); // one volatile read
        return d == null || d.isOrderlyDeparture() ? null : d;
    }

    /** Why {@code rank} is gone (failure or orderly departure), or null while it is alive. */
    public PeerFailedException departure(int rank) {
        return departures.get(rank); // one volatile read
    }

    /**
     * Cheap liveness check for waits: one volatile read, no allocation while the peer is alive.
     *
     * @throws PeerFailedException       if {@code rank} failed or left (a fresh exception whose cause is the original)
     * @throws IndexOutOfBoundsException if {@code rank} is not in {@code [0, size)}
     */
    public void checkAlive(int rank) {
        PeerFailedException d = departures.get(rank); // one volatile read
        if (d != null) {
            throw new PeerFailedException(rank, d.reason(), d.isOrderlyDeparture(), d);
        }
    }

    /** {@link #checkAlive(int)} for the process of {@code thread}. */
    public void checkAlive(ThreadId thread) {
        checkAlive(thread.rank());
    }

    /** Heartbeats sent and received, peers declared failed: for the fabric's counters file. */
    public io.fabricrpc.counters.CounterSource counters() {
        return countersView;
    }

    /** The membership once {@link #join} completed, else null. */
    public Membership membership() {
        return membership;
    }

    public JobConfig config() {
        return config;
    }

    public int rank() {
        return config.rank();
    }

    public int size() {
        return config.size();
    }

    /** The coordinator port: on rank 0 the port actually bound (useful when configured as 0). */
    public int coordinatorPort() {
        return role instanceof Coordinator c ? c.boundPort() : config.coordinatorPort();
    }

    /** True once the shutdown barrier was released. */
    public boolean isJobShutdown() {
        return departures.isJobShutdown();
    }

    /** Rank 0: the last 256 join attempts refused (remote address, claimed rank, reason); empty on other ranks. */
    public List<JoinRefusal> refusals() {
        return departures.refusals();
    }

    /** Adds a listener; departures (and a shutdown) that already happened are replayed to it first. */
    public void addListener(ControlPlaneListener listener) {
        departures.addListener(listener, closed::get);
    }

    public void removeListener(ControlPlaneListener listener) {
        departures.removeListener(listener);
    }

    @Override
    public String toString() {
        return "ControlPlane{rank=" + config.rank() + ", size=" + config.size() + ", coordinator="
            + coordinatorDescription() + (closed.get() ? ", closed" : "") + "}";
    }

    // ------------------------------------------------------------------------------------------ for the roles

    String coordinatorDescription() {
        return config.coordinatorHost() + ":" + coordinatorPort();
    }

    void membershipFormed(Membership m) {
        membership = m;
    }

    /** Records that {@code rank} is gone and tells the listeners; false if it was already gone. */
    boolean depart(int rank, String reason, boolean orderly, Throwable cause) {
        return departures.depart(rank, reason, orderly, cause);
    }

    /** The barrier was released: every rank ends normally (no per-rank events). */
    void jobShutdown() {
        departures.jobShutdown();
    }

    /** On the event loop: a join the coordinator refused. */
    void refused(JoinRefusal refusal) {
        departures.refused(refusal);
    }

    private void notOnEventLoop(String what) {
        if (loop.inEventLoop()) {
            throw new IllegalStateException(what + " blocks and must not be called from a control-plane listener");
        }
    }

    private void ensureOpen() {
        if (closed.get() && failStopped != null) {
            throw new PeerFailedException(config.rank(), failStopped, false);
        }
        if (closed.get()) {
            throw new IllegalStateException("control plane of rank " + config.rank() + " is closed");
        }
    }

    private String onLoop(java.util.concurrent.Callable<String> c) {
        try {
            return loop.submit(c).get(1, TimeUnit.SECONDS);
        } catch (Exception e) {
            return "(state unavailable: " + e + ")";
        }
    }

    private static <T> T await(CompletableFuture<T> f, long millis,
                               java.util.function.Supplier<ControlPlaneException> onTimeout) {
        try {
            return f.get(millis, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw onTimeout.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ControlPlaneException("interrupted while waiting for the control plane", e);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                throw re;
            }
            throw new ControlPlaneException(String.valueOf(e.getCause()), e.getCause());
        }
    }
}
