package io.fabricrpc.fabric;

import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.api.JobConfig;
import io.fabricrpc.api.ControlPlaneException;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Several control planes inside one JVM on loopback. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ControlPlaneTest {

    static final String SECRET = "test-secret-0123456789abcdef";
    static final Duration JOIN_TIMEOUT = Duration.ofSeconds(10);

    private final List<ControlPlane> planes = new ArrayList<>();
    private ExecutorService pool;

    @BeforeEach
    void setUp() {
        pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "test-joiner");
            t.setDaemon(true);
            return t;
        });
    }

    @AfterEach
    void tearDown() {
        planes.forEach(ControlPlane::close);
        pool.shutdownNow();
    }

    static JobConfig.Builder config(int rank, int size, int port) {
        // The detection tests use a short failure timeout on purpose (the default, 3 s, suits loaded machines).
        return JobConfig.builder().rank(rank).size(size).coordinator("127.0.0.1", port).jobSecret(SECRET)
            .joinTimeout(JOIN_TIMEOUT).failureTimeout(java.time.Duration.ofMillis(500));
    }

    ControlPlane start(JobConfig cfg) {
        ControlPlane cp = ControlPlane.start(cfg);
        planes.add(cp);
        return cp;
    }

    CompletableFuture<Membership> joinAsync(ControlPlane cp) {
        return CompletableFuture.supplyAsync(() -> cp.join(descriptors(cp.rank())), pool);
    }

    static Map<String, byte[]> descriptors(int rank) {
        return Map.of("shm", ("shm-of-" + rank).getBytes(StandardCharsets.UTF_8), "rdma", new byte[] {(byte) rank, 42});
    }

    /** Coordinator plus members 1..size-1, all joined. */
    List<ControlPlane> formJob(int size) throws Exception {
        ControlPlane c = start(config(0, size, 0).build());
        List<ControlPlane> all = new ArrayList<>(List.of(c));
        List<CompletableFuture<Membership>> joins = new ArrayList<>(List.of(joinAsync(c)));
        for (int r = 1; r < size; r++) {
            ControlPlane m = start(config(r, size, c.coordinatorPort()).build());
            all.add(m);
            joins.add(joinAsync(m));
        }
        for (CompletableFuture<Membership> j : joins) {
            j.get(15, TimeUnit.SECONDS);
        }
        return all;
    }

    static long awaitMillis(java.util.function.BooleanSupplier condition, long maxMillis) {
        long start = System.nanoTime();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - start > maxMillis * 1_000_000) {
                fail("condition not met within " + maxMillis + " ms");
            }
            LockSupport.parkNanos(1_000_000);
        }
        return (System.nanoTime() - start) / 1_000_000;
    }

    @Test
    void threeProcessesExchangeDescriptorsAndGetIdenticalMembership() throws Exception {
        List<ControlPlane> job = formJob(3);
        Membership m0 = job.get(0).membership();
        assertNotNull(m0);
        assertEquals(3, m0.size());
        for (ControlPlane cp : job) {
            assertEquals(m0, cp.membership(), "rank " + cp.rank());
        }
        for (int r = 0; r < 3; r++) {
            assertArrayEquals(("shm-of-" + r).getBytes(StandardCharsets.UTF_8), m0.descriptor(r, "shm"));
            assertArrayEquals(new byte[] {(byte) r, 42}, m0.descriptor(r, "rdma"));
            assertEquals("127.0.0.1", m0.host(r));
            assertEquals(ProcessHandle.current().pid(), m0.pid(r));
            for (ControlPlane cp : job) {
                assertTrue(cp.isAlive(r));
                assertNull(cp.failure(r));
                cp.checkAlive(r);
            }
        }
        assertTrue(job.get(0).refusals().isEmpty());
    }

    @Test
    void shutdownBarrierEndsTheJobWithoutFailures() throws Exception {
        List<ControlPlane> job = formJob(3);
        List<String> events = new CopyOnWriteArrayList<>();
        for (ControlPlane cp : job) {
            cp.addListener(new ControlPlaneListener() {
                @Override
                public void peerFailed(int rank, PeerFailedException failure) {
                    events.add(cp.rank() + " saw failure of " + rank);
                }

                @Override
                public void jobShutdown() {
                    events.add("shutdown@" + cp.rank());
                }
            });
        }
        // Stagger arrivals: the barrier must hold the early ones.
        CompletableFuture<Void> s1 = CompletableFuture.runAsync(() -> job.get(1).shutdown(), pool);
        CompletableFuture<Void> s0 = CompletableFuture.runAsync(() -> job.get(0).shutdown(), pool);
        Thread.sleep(200);
        assertFalse(s0.isDone() || s1.isDone(), "barrier released before rank 2 arrived");
        job.get(2).shutdown();
        s0.get(5, TimeUnit.SECONDS);
        s1.get(5, TimeUnit.SECONDS);
        Thread.sleep(300); // a late failure report would show up here
        assertEquals(3, events.size(), events.toString());
        for (ControlPlane cp : job) {
            assertTrue(cp.isJobShutdown());
            for (int r = 0; r < 3; r++) {
                assertNull(cp.failure(r), "rank " + cp.rank() + " sees failure of " + r);
            }
        }
    }

    @Test
    void aRankRefusedForItsSecretAbortsEveryRanksJoinWithinSeconds() throws Exception {
        ControlPlane c = start(config(0, 3, 0).build());
        CompletableFuture<Membership> coordinatorJoin = joinAsync(c);
        ControlPlane m2 = start(config(2, 3, c.coordinatorPort()).build());
        CompletableFuture<Membership> j2 = joinAsync(m2);
        ControlPlane wrong = start(config(1, 3, c.coordinatorPort()).jobSecret("not-the-job-secret-at-all").build());
        long start = System.nanoTime();
        assertThrows(JoinRefusedException.class, () -> wrong.join(descriptors(1)));
        for (CompletableFuture<Membership> join : List.of(coordinatorJoin, j2)) {
            ExecutionException e = assertThrows(ExecutionException.class, () -> join.get(10, TimeUnit.SECONDS));
            JoinRefusedException refused = assertInstanceOf(JoinRefusedException.class, e.getCause());
            assertEquals(JoinRefusedException.Reason.JOB_ABORTED, refused.reason());
            assertTrue(refused.getMessage().contains("rank 1") && refused.getMessage().contains("job secret does not match"),
                refused.getMessage());
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        assertTrue(millis < JOIN_TIMEOUT.toMillis() / 2, "aborted after " + millis + " ms, not at the join timeout");
    }

    @Test
    void wrongSecretIsRefusedOnBothSidesAndTheJobStillForms() throws Exception {
        // A refused rank that then joins validly within the grace period is a stray connection, not a misconfigured
        // rank: a long grace here keeps the test independent of how fast this machine starts the members.
        System.setProperty("fabricrpc.joinAbortGraceMillis", "30000");
        ControlPlane c;
        try {
            c = start(config(0, 3, 0).build());
        } finally {
            System.clearProperty("fabricrpc.joinAbortGraceMillis");
        }
        List<JoinRefusal> heard = new CopyOnWriteArrayList<>();
        c.addListener(new ControlPlaneListener() {
            @Override
            public void joinRefused(JoinRefusal refusal) {
                heard.add(refusal);
            }
        });
        CompletableFuture<Membership> coordinatorJoin = joinAsync(c);
        ControlPlane impostor = start(config(1, 3, c.coordinatorPort()).jobSecret("not-the-job-secret-at-all").build());
        JoinRefusedException e = assertThrows(JoinRefusedException.class, () -> impostor.join(descriptors(1)));
        assertEquals(JoinRefusedException.Reason.WRONG_SECRET, e.reason());
        assertTrue(e.getMessage().contains("refused rank 1") && e.getMessage().contains("job secret does not match"),
            e.getMessage());
        assertInstanceOf(SecurityException.class, e);

        List<JoinRefusal> refusals = c.refusals();
        assertEquals(1, refusals.size());
        assertEquals(1, refusals.get(0).claimedRank());
        assertEquals(JoinRefusedException.Reason.WRONG_SECRET, refusals.get(0).reason());
        assertTrue(refusals.get(0).remoteAddress().contains("127.0.0.1"), refusals.get(0).remoteAddress());
        assertEquals(refusals, heard);

        ControlPlane m1 = start(config(1, 3, c.coordinatorPort()).build());
        ControlPlane m2 = start(config(2, 3, c.coordinatorPort()).build());
        CompletableFuture<Membership> j1 = joinAsync(m1);
        CompletableFuture<Membership> j2 = joinAsync(m2);
        Membership m = coordinatorJoin.get(15, TimeUnit.SECONDS);
        assertEquals(m, j1.get(5, TimeUnit.SECONDS));
        assertEquals(m, j2.get(5, TimeUnit.SECONDS));
    }

    @Test
    void missingSecretIsRefusedOnBothSides() throws Exception {
        ControlPlane c = start(config(0, 2, 0).build());
        CompletableFuture<Membership> coordinatorJoin = joinAsync(c);
        ControlPlane noSecret = start(config(1, 2, c.coordinatorPort()).jobSecret((byte[]) null).build());
        JoinRefusedException e = assertThrows(JoinRefusedException.class, () -> noSecret.join(descriptors(1)));
        assertEquals(JoinRefusedException.Reason.MISSING_SECRET, e.reason());
        assertTrue(e.getMessage().contains("no job secret") && e.getMessage().contains(JobConfig.ENV_JOB_SECRET),
            e.getMessage());
        assertEquals(JoinRefusedException.Reason.MISSING_SECRET, c.refusals().get(0).reason());

        ControlPlane m1 = start(config(1, 2, c.coordinatorPort()).build());
        m1.join(descriptors(1));
        assertEquals(2, coordinatorJoin.get(5, TimeUnit.SECONDS).size());
    }

    @Test
    void coordinatorWithoutSecretDoesNotStart() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> ControlPlane.start(config(0, 2, 0).jobSecret((byte[]) null).build()));
        assertTrue(e.getMessage().contains(JobConfig.ENV_JOB_SECRET), e.getMessage());
    }

    @Test
    void duplicateRankAndMismatchedSizeAreRefused() throws Exception {
        ControlPlane c = start(config(0, 3, 0).build());
        CompletableFuture<Membership> coordinatorJoin = joinAsync(c);
        ControlPlane first = start(config(1, 3, c.coordinatorPort()).build());
        CompletableFuture<Membership> firstJoin = joinAsync(first);
        awaitMillis(() -> c.registeredRanksForTest().equals("[1]"), 5000);

        ControlPlane dup = start(config(1, 3, c.coordinatorPort()).build());
        JoinRefusedException e = assertThrows(JoinRefusedException.class, () -> dup.join(descriptors(1)));
        assertEquals(JoinRefusedException.Reason.DUPLICATE_RANK, e.reason());
        assertTrue(e.getMessage().contains("rank 1 is already held by"), e.getMessage());

        ControlPlane wrongSize = start(config(2, 4, c.coordinatorPort()).build());
        e = assertThrows(JoinRefusedException.class, () -> wrongSize.join(descriptors(2)));
        assertEquals(JoinRefusedException.Reason.CONFIG_MISMATCH, e.reason());
        assertTrue(e.getMessage().contains("size=4") && e.getMessage().contains("size=3"), e.getMessage());

        ControlPlane m2 = start(config(2, 3, c.coordinatorPort()).build());
        m2.join(descriptors(2));
        assertEquals(3, coordinatorJoin.get(5, TimeUnit.SECONDS).size());
        assertEquals(3, firstJoin.get(5, TimeUnit.SECONDS).size());
        assertEquals(2, c.refusals().size());
    }

    @Test
    void unreachableCoordinatorTimesOutWithClearMessage() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        ControlPlane m = start(config(1, 2, port).joinTimeout(Duration.ofMillis(800)).build());
        long t0 = System.nanoTime();
        ControlPlaneException e = assertThrows(ControlPlaneException.class, () -> m.join(descriptors(1)));
        long millis = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(e.getMessage().contains("could not reach the coordinator at 127.0.0.1:" + port), e.getMessage());
        assertTrue(millis < 3000, "took " + millis + " ms");
    }

    @Test
    void coordinatorJoinTimeoutNamesMissingRanks() {
        ControlPlane c = start(config(0, 3, 0).joinTimeout(Duration.ofMillis(500)).build());
        ControlPlaneException e = assertThrows(ControlPlaneException.class, () -> c.join(descriptors(0)));
        assertTrue(e.getMessage().contains("missing ranks [1, 2]"), e.getMessage());
    }

    @Test
    void abruptlyClosedPeerFailsWaitersWithinASecond() throws Exception {
        List<ControlPlane> job = formJob(3);
        ControlPlane c = job.get(0);
        ControlPlane m1 = job.get(1);
        List<Integer> heardBy1 = new CopyOnWriteArrayList<>();
        m1.addListener(new ControlPlaneListener() {
            @Override
            public void peerFailed(int rank, PeerFailedException failure) {
                heardBy1.add(rank);
            }
        });
        // A waiter in the fabric: polls its condition and checks the peer's liveness on every idle round.
        CompletableFuture<PeerFailedException> waiter = CompletableFuture.supplyAsync(() -> {
            while (true) {
                try {
                    m1.checkAlive(2);
                } catch (PeerFailedException e) {
                    return e;
                }
                LockSupport.parkNanos(200_000);
            }
        }, pool);
        long t0 = System.nanoTime();
        job.get(2).abortForTest();
        PeerFailedException e = waiter.get(3, TimeUnit.SECONDS);
        long millis = (System.nanoTime() - t0) / 1_000_000;
        System.out.println("abrupt close observed by a waiter on rank 1 after " + millis + " ms");
        assertTrue(millis < 1000, "took " + millis + " ms");
        assertEquals(2, e.rank());
        assertFalse(e.isOrderlyDeparture());
        assertTrue(e.getMessage().contains("closed without leave"), e.getMessage());
        awaitMillis(() -> c.failure(2) != null, 1000);
        assertThrows(PeerFailedException.class, () -> c.checkAlive(2));
        awaitMillis(() -> !heardBy1.isEmpty(), 1000); // listeners run just after the state is published
        assertEquals(List.of(2), heardBy1);
        assertTrue(c.isAlive(1) && m1.isAlive(0));
    }

    @Test
    void aPeerDeclaredFailedIsRecordedAsAJfrEvent() throws Exception {
        java.nio.file.Path file = java.nio.file.Files.createTempFile("fabricrpc-departure", ".jfr");
        try (jdk.jfr.Recording recording = new jdk.jfr.Recording()) {
            recording.enable("fabricrpc.PeerDeparture");
            recording.start();
            List<ControlPlane> job = formJob(3);
            job.get(2).muteHeartbeatsForTest();
            awaitMillis(() -> job.get(1).failure(2) != null, 3000);
            recording.stop();
            recording.dump(file);
            List<jdk.jfr.consumer.RecordedEvent> departures = jdk.jfr.consumer.RecordingFile.readAllEvents(file).stream()
                    .filter(e -> e.getEventType().getName().equals("fabricrpc.PeerDeparture")).toList();
            assertTrue(departures.stream().anyMatch(e -> e.getInt("rank") == 1 && e.getInt("peer") == 2
                    && !e.getBoolean("orderly") && e.getString("reason").contains("no heartbeat")), departures.toString());
        } finally {
            java.nio.file.Files.deleteIfExists(file);
        }
    }

    @Test
    void silentPeerIsDeclaredFailedAfterTheFailureTimeout() throws Exception {
        List<ControlPlane> job = formJob(3);
        long t0 = System.nanoTime();
        job.get(2).muteHeartbeatsForTest();
        long millis = awaitMillis(() -> job.get(1).failure(2) != null, 3000);
        System.out.println("silent peer declared failed after " + millis + " ms (timeout 500 ms)");
        assertTrue(job.get(1).failure(2).getMessage().contains("no heartbeat"), job.get(1).failure(2).getMessage());
        assertTrue(millis >= 300, "declared after only " + millis + " ms");
        assertNull(job.get(1).failure(0));
    }

    @Test
    void lostCoordinatorFailsRankZeroAndEveryWaitOnAnyone() throws Exception {
        List<ControlPlane> job = formJob(3);
        job.get(0).abortForTest();
        // Rank 1 marks rank 0 failed, then rank 2 ("liveness unknown"): wait for both, not just the first.
        long millis = awaitMillis(() -> job.get(1).failure(0) != null && job.get(1).failure(2) != null
                && job.get(2).failure(0) != null, 3000);
        System.out.println("coordinator loss observed after " + millis + " ms");
        assertThrows(PeerFailedException.class, () -> job.get(1).checkAlive(0));
        PeerFailedException other = assertThrows(PeerFailedException.class, () -> job.get(1).checkAlive(2));
        assertTrue(other.getMessage().contains("liveness unknown"), other.getMessage());
        assertTrue(job.get(1).isAlive(1), "a process is never dead to itself");
        assertThrows(PeerFailedException.class, () -> job.get(1).shutdown(Duration.ofSeconds(2)));
    }

    @Test
    void orderlyCloseIsADepartureNotAFailure() throws Exception {
        List<ControlPlane> job = formJob(3);
        List<String> events = new CopyOnWriteArrayList<>();
        job.get(1).addListener(new ControlPlaneListener() {
            @Override
            public void peerFailed(int rank, PeerFailedException failure) {
                events.add("failed " + rank);
            }

            @Override
            public void peerLeft(int rank) {
                events.add("left " + rank);
            }
        });
        job.get(2).close();
        awaitMillis(() -> !job.get(1).isAlive(2) && !job.get(0).isAlive(2), 3000);
        Thread.sleep(700); // longer than the failure timeout: no late failure report
        assertNull(job.get(1).failure(2));
        assertNull(job.get(0).failure(2));
        PeerFailedException d = assertThrows(PeerFailedException.class, () -> job.get(1).checkAlive(2));
        assertTrue(d.isOrderlyDeparture());
        assertEquals(List.of("left 2"), events);
        // The remaining two still end normally.
        CompletableFuture<Void> s0 = CompletableFuture.runAsync(() -> job.get(0).shutdown(), pool);
        job.get(1).shutdown();
        s0.get(5, TimeUnit.SECONDS);
    }

    @Test
    void oversizeOrGarbageHandshakeIsRefusedAndTheJobStillForms() throws Exception {
        ControlPlane c = start(config(0, 2, 0).build());
        CompletableFuture<Membership> coordinatorJoin = joinAsync(c);
        try (Socket s = new Socket("127.0.0.1", c.coordinatorPort())) {
            OutputStream out = s.getOutputStream();
            out.write(new byte[] {0x10, 0, 0, 0, 1, 2, 3, 4}); // a 256 MiB frame announced
            out.flush();
            s.setSoTimeout(3000);
            // The coordinator answers with REFUSE and closes; read until EOF.
            while (s.getInputStream().read() >= 0) {
                // drain
            }
        } catch (IOException expected) {
            // reset by the coordinator is fine too
        }
        awaitMillis(() -> !c.refusals().isEmpty(), 3000);
        assertEquals(JoinRefusedException.Reason.PROTOCOL, c.refusals().get(0).reason());
        assertTrue(c.refusals().get(0).message().contains("bytes"), c.refusals().get(0).message());
        ControlPlane m1 = start(config(1, 2, c.coordinatorPort()).build());
        m1.join(descriptors(1));
        assertEquals(2, coordinatorJoin.get(5, TimeUnit.SECONDS).size());
    }

    /** A flood of refused joins writes one warning per period with a count, and pre-auth connections are capped. */
    @Test
    void aFloodOfBadJoinsIsLoggedWithCountsAndCannotStarveRealJoins() throws Exception {
        java.util.logging.Logger log = java.util.logging.Logger.getLogger(ControlPlane.class.getName());
        List<String> warnings = java.util.Collections.synchronizedList(new ArrayList<>());
        java.util.logging.Handler capture = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord record) {
                if (record.getLevel() == java.util.logging.Level.WARNING) {
                    warnings.add(record.getMessage());
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        log.addHandler(capture);
        List<Socket> idle = new ArrayList<>();
        try {
            ControlPlane c = start(config(0, 2, 0).build());
            CompletableFuture<Membership> coordinatorJoin = joinAsync(c);
            for (int i = 0; i < 40; i++) {
                try (Socket s = new Socket("127.0.0.1", c.coordinatorPort())) {
                    s.getOutputStream().write(new byte[] {0x10, 0, 0, 0, 1, 2, 3, 4});
                    s.setSoTimeout(3000);
                    while (s.getInputStream().read() >= 0) {
                        // drain until the coordinator closes
                    }
                } catch (IOException expected) {
                    // reset is fine too
                }
            }
            awaitMillis(() -> c.refusals().size() >= 40, 5000);
            assertEquals(1, warnings.size(), "one line for 40 refusals within the period: " + warnings);
            for (int i = 0; i < 40; i++) { // silent connections that never start the handshake
                idle.add(new Socket("127.0.0.1", c.coordinatorPort()));
            }
            awaitMillis(() -> c.refusals().stream().anyMatch(r -> r.message().contains("fabricrpc.maxPendingJoinsPerHost")),
                5000);
            ControlPlane m1 = start(config(1, 2, c.coordinatorPort()).build());
            m1.join(descriptors(1));
            assertEquals(2, coordinatorJoin.get(5, TimeUnit.SECONDS).size(), "the real join got through");
            awaitMillis(() -> {
                try (Socket late = new Socket("127.0.0.1", c.coordinatorPort())) {
                    return false;
                } catch (IOException refused) {
                    return true; // nothing listens once the job has formed
                }
            }, 3000);
        } finally {
            log.removeHandler(capture);
            for (Socket s : idle) {
                s.close();
            }
        }
    }

    @Test
    void closeReleasesThreadsAndThePort() throws Exception {
        List<ControlPlane> job = formJob(3);
        int port = job.get(0).coordinatorPort();
        assertTrue(controlThreads() >= 3);
        for (ControlPlane cp : job) {
            cp.close();
        }
        awaitMillis(() -> controlThreads() == 0, 3000);
        // Netty's shared helper thread (used while a channel registers) exits by itself after a second idle.
        assertTrue(io.netty.util.concurrent.GlobalEventExecutor.INSTANCE.awaitInactivity(5, TimeUnit.SECONDS));
        List<String> netty = Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive)
            .map(Thread::getName).filter(n -> n.contains("EventExecutor") || n.contains("nioEventLoop")
                || n.startsWith(ControlPlane.THREAD_NAME_PREFIX)).toList();
        assertEquals(List.of(), netty, "threads left behind");
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new java.net.InetSocketAddress("127.0.0.1", port));
        }
        assertThrows(IllegalStateException.class, () -> job.get(1).shutdown());
        assertThrows(PeerFailedException.class, () -> job.get(1).checkAlive(2), "after close nothing waits");
    }

    static long controlThreads() {
        return Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.isAlive() && t.getName().startsWith(ControlPlane.THREAD_NAME_PREFIX)).count();
    }

    @Test
    void shutdownIsBoundedWhenARankNeverArrives() throws Exception {
        List<ControlPlane> job = formJob(3);
        CompletableFuture<Void> s1 = CompletableFuture.runAsync(() -> job.get(1).shutdown(Duration.ofSeconds(10)),
            pool);
        ControlPlaneException e = assertThrows(ControlPlaneException.class,
            () -> job.get(0).shutdown(Duration.ofMillis(500)));
        assertTrue(e.getMessage().contains("ranks not at the barrier: [2]"), e.getMessage());
        // The coordinator closed: rank 1's barrier ends at once instead of running into its own timeout.
        java.util.concurrent.ExecutionException x = assertThrows(java.util.concurrent.ExecutionException.class,
            () -> s1.get(3, TimeUnit.SECONDS));
        assertInstanceOf(PeerFailedException.class, x.getCause());
        assertEquals(0, ((PeerFailedException) x.getCause()).rank());
    }

    @Test
    void singleProcessJobFormsAndShutsDownAlone() {
        ControlPlane c = start(config(0, 1, 0).build());
        Membership m = c.join(descriptors(0));
        assertEquals(1, m.size());
        c.shutdown(Duration.ofSeconds(2));
        assertTrue(c.isJobShutdown());
        assertNull(c.failure(0));
    }

    @Test
    void aListenerMayCloseItsControlPlaneWhenAPeerFails() throws Exception {
        List<ControlPlane> job = formJob(3);
        ControlPlane m1 = job.get(1);
        m1.addListener(new ControlPlaneListener() {
            @Override
            public void peerFailed(int rank, PeerFailedException failure) {
                m1.close();
            }
        });
        job.get(2).abortForTest();
        awaitMillis(() -> !job.get(0).isAlive(1), 3000);
        assertNull(job.get(0).failure(1), "rank 1 closed in an orderly way");
        awaitMillis(() -> controlThreads() == 1, 5000); // only rank 0's loop is left
    }

    @Test
    void controlThreadsAreDaemons() throws Exception {
        formJob(2);
        assertTrue(Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().startsWith(ControlPlane.THREAD_NAME_PREFIX)).allMatch(Thread::isDaemon));
    }
}
