package io.fabricrpc.invocation;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.RemoteContextConsumer;
import io.fabricrpc.api.Synchronizer;
import io.fabricrpc.fabric.JoinRefusedException;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.api.FullPolicy;
import io.fabricrpc.api.MessagingException;
import io.fabricrpc.api.MessengerConfig;
import io.fabricrpc.api.RemoteInvocationException;
import io.fabricrpc.serialization.UnknownFunctionException;
import io.fabricrpc.serialization.UnregisteredClassException;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The invocation primitives over a real transport; every transport module runs it with its own fixture. */
public abstract class FabricTest {
    protected abstract TransportFixture fixture();

    /** Receiver-side state of one worker: per-sender FIFO check, counters, last buffer checksum. */
    public static final class Inbox {
        final long[] next;
        public long received;
        long broadcasts;
        volatile long checksum = -1;
        public String error;
        /** What a call left for the test thread to look at after it returned. */
        public Object note;

        public Inbox(int senders) {
            next = new long[senders];
        }

        public void record(int sender, long sequence) {
            if (error == null && sequence != next[sender]) {
                error = "from worker " + sender + ": got call " + sequence + ", expected " + next[sender];
            }
            next[sender] = sequence + 1;
            received++;
        }
    }

    private static long crc(MemorySegment bytes) {
        CRC32 crc = new CRC32();
        crc.update(bytes.asByteBuffer());
        return crc.getValue();
    }

    private static byte[] randomBytes(int size, long seed) {
        byte[] bytes = new byte[size];
        new java.util.Random(seed).nextBytes(bytes);
        return bytes;
    }

    // -------------------------------------------------------------------------------------------------------------

    @Test
    void callsAreExactlyOnceAndInOrderPerSenderUnderStress() throws Exception {
        int processes = 2;
        int threads = 2;
        int workers = processes * threads;
        long total = Long.getLong("fabricrpc.fabric.stress.calls", 10_000_000L);
        long perPair = total / ((long) workers * workers);
        Object[][] contexts = LocalJob.inboxes(processes, threads);
        try (LocalJob job = new LocalJob(fixture(), processes, threads, MessengerConfig.defaults())) {
            long started = System.nanoTime();
            job.runWorkers(contexts, (fabric, index) -> {
                int me = fabric.rank() * threads + index;
                Inbox inbox = Fabric.currentContext();
                for (long sequence = 0; sequence < perPair; sequence++) {
                    for (int dest = 0; dest < workers; dest++) {
                        long s = sequence;
                        fabric.call(new ThreadId(dest / threads, dest % threads),
                                (RemoteContextConsumer<Inbox>) box -> box.record(me, s), null);
                    }
                    if ((sequence & 63) == 0) {
                        fabric.processCalls();
                    }
                }
                LocalJob.processUntil(fabric, () -> inbox.received == perPair * workers, "all calls to " + me);
            });
            double seconds = (System.nanoTime() - started) / 1e9;
            System.out.printf("fabric stress: %,d calls in %.1f s (%,.0f calls/s)%n", perPair * workers * workers,
                    seconds, perPair * workers * workers / seconds);
            for (Object[] rank : contexts) {
                for (Object context : rank) {
                    Inbox inbox = (Inbox) context;
                    assertNull(inbox.error);
                    assertEquals(perPair * workers, inbox.received);
                }
            }
        }
    }

    @Test
    void threadsSharingAContextSlotEachKeepTheirOwnOrderedStream() throws Exception {
        // A thread's context is found by its id modulo a table size: two live threads whose ids collide, and a
        // thread that takes over the slot of one that ended, must each still send on their own channels.
        long perThread = 50_000;
        Object[][] contexts = {{new Inbox(3)}, {new Inbox(3)}};
        try (LocalJob job = new LocalJob(fixture(), 2, 1, MessengerConfig.defaults())) {
            ThreadId receiver = new ThreadId(1, 0);
            job.runWorkers(contexts, (fabric, index) -> {
                Inbox inbox = Fabric.currentContext();
                if (fabric.rank() == 1) {
                    LocalJob.processUntil(fabric, () -> inbox.received == 3 * perThread, "calls of three threads");
                    return;
                }
                java.util.concurrent.CountDownLatch bothAlive = new java.util.concurrent.CountDownLatch(2);
                java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
                java.util.function.IntFunction<Runnable> sender = id -> () -> {
                    try {
                        if (id < 2) {
                            bothAlive.countDown();
                            bothAlive.await();
                        }
                        for (long sequence = 0; sequence < perThread; sequence++) {
                            long s = sequence;
                            assertTrue(fabric.call(receiver, (RemoteContextConsumer<Inbox>) box -> box.record(id, s), null));
                        }
                        fabric.flush();
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                };
                Thread first = Thread.ofPlatform().unstarted(sender.apply(0));
                Thread second = threadInTheSlotOf(first, sender.apply(1));
                first.start();
                second.start();
                join(first, second);
                Thread successor = threadInTheSlotOf(first, sender.apply(2)); // the slot's holder has ended
                successor.start();
                join(successor);
                assertNull(failure.get());
            });
            Inbox inbox = (Inbox) contexts[1][0];
            assertNull(inbox.error);
            assertEquals(3 * perThread, inbox.received);
        }
    }

    /**
     * Fencing: a rank that stalls past the failure timeout is declared failed, and from that verdict on its calls are
     * not run anywhere, calls to it fail, and it fails its own calls (it lost the coordinator): nothing runs silently
     * across the verdict in either direction.
     */
    @Test
    void aRankDeclaredFailedIsFencedInBothDirections() throws Exception {
        Object[][] contexts = LocalJob.inboxes(3, 1);
        try (LocalJob job = new LocalJob(fixture(), 3, 1, MessengerConfig.defaults())) {
            java.util.concurrent.atomic.AtomicReference<Throwable> senderEnd = new java.util.concurrent.atomic.AtomicReference<>();
            java.util.concurrent.atomic.AtomicLong ranAfterFence = new java.util.concurrent.atomic.AtomicLong(-1);
            ThreadId receiver = new ThreadId(1, 0);
            job.runWorkers(contexts, (fabric, index) -> {
                Inbox inbox = Fabric.currentContext();
                switch (fabric.rank()) {
                    case 2 -> { // the stalled rank: keeps calling rank 1 until its own fabric refuses
                        io.fabricrpc.fabric.FaultInjection.muteHeartbeats(((FabricRuntime) fabric).controlPlane());
                        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                        try {
                            for (long s = 0; System.nanoTime() < deadline; s++) {
                                long sequence = s;
                                fabric.call(receiver, (RemoteContextConsumer<Inbox>) box -> box.record(0, sequence), null);
                                fabric.processCalls();
                            }
                        } catch (Throwable t) {
                            senderEnd.set(t);
                        }
                    }
                    case 1 -> {
                        io.fabricrpc.fabric.ControlPlane plane = ((FabricRuntime) fabric).controlPlane();
                        LocalJob.processUntil(fabric, () -> plane.failure(2) != null, "the verdict on rank 2");
                        long settle = System.nanoTime() + 200_000_000L; // the listener fences just after the verdict
                        while (System.nanoTime() < settle) {
                            fabric.processCalls();
                        }
                        long atFence = inbox.received;
                        long until = System.nanoTime() + 1_000_000_000L;
                        while (System.nanoTime() < until) {
                            fabric.processCalls();
                        }
                        ranAfterFence.set(inbox.received - atFence);
                        assertThrows(io.fabricrpc.api.PeerFailedException.class, () -> {
                            fabric.call(new ThreadId(2, 0), (RemoteContextConsumer<Inbox>) box -> box.record(0, 0), null);
                            fabric.flush();
                        });
                    }
                    default -> LocalJob.processUntil(fabric, () -> ((FabricRuntime) fabric).controlPlane().failure(2) != null,
                            "the verdict on rank 2 at rank 0");
                }
            });
            assertEquals(0, ranAfterFence.get(), "calls of the fenced rank run after the verdict");
            assertInstanceOf(io.fabricrpc.api.PeerFailedException.class, senderEnd.get(),
                    "the stalled rank's own calls end with PeerFailedException: " + senderEnd.get());
            assertTrue(((Inbox) contexts[1][0]).received > 0, "calls ran before the verdict");
            assertNull(((Inbox) contexts[1][0]).error);
            // Cut off from the job, the fenced rank cannot end it in order: its close says so (after releasing all).
            assertThrows(io.fabricrpc.api.PeerFailedException.class, job.rank(2)::close);
        }
    }

    private static Thread threadInTheSlotOf(Thread other, Runnable body) {
        while (true) {
            Thread thread = Thread.ofPlatform().unstarted(body);
            if (((thread.threadId() - other.threadId()) % ThreadContexts.SLOTS) == 0) {
                return thread;
            }
        }
    }

    private static void join(Thread... threads) {
        for (Thread thread : threads) {
            try {
                thread.join(120_000);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            assertFalse(thread.isAlive(), thread.getName() + " still running");
        }
    }

    @Test
    void sendBasedCallsAreExactlyOnceAndInOrder() throws Exception {
        int processes = 2;
        int threads = 2;
        int workers = processes * threads;
        long perPair = 20_000;
        Object[][] contexts = LocalJob.inboxes(processes, threads);
        try (LocalJob job = new LocalJob(fixture(), processes, threads, MessengerConfig.defaults())) {
            job.runWorkers(contexts, (fabric, index) -> {
                int me = fabric.rank() * threads + index;
                Inbox inbox = Fabric.currentContext();
                for (long sequence = 0; sequence < perPair; sequence++) {
                    for (int dest = 0; dest < workers; dest++) {
                        long s = sequence;
                        assertTrue(fabric.callSend(new ThreadId(dest / threads, dest % threads),
                                (RemoteContextConsumer<Inbox>) box -> box.record(me, s)));
                    }
                    if ((sequence & 15) == 0) {
                        fabric.processCalls();
                    }
                }
                LocalJob.processUntil(fabric, () -> inbox.received == perPair * workers, "all send-based calls to " + me);
            });
            for (Object[] rank : contexts) {
                for (Object context : rank) {
                    assertNull(((Inbox) context).error);
                    assertEquals(perPair * workers, ((Inbox) context).received);
                }
            }
        }
    }

    @Test
    void everyCallBufferVariantDeliversTheBytes() throws Exception {
        try (LocalJob job = new LocalJob(fixture(), 2, 1, MessengerConfig.defaults())) {
            job.rank(1).startHandlerThreads();
            Fabric fabric = job.rank(0);
            ThreadId dest = new ThreadId(1, 0);
            // Handler threads have no user context, so the functions record into a static per-test map instead.
            byte[] payload = randomBytes(3000, 1);
            long expected = crc(MemorySegment.ofArray(payload));
            Synchronizer consumed = new Synchronizer(Synchronizer.Mode.CONSUMED);

            fabric.callBuffer(dest, buffer -> Results.put("inline", crc(buffer)), MemorySegment.ofArray(payload), 0,
                    payload.length, consumed);
            consumed.await(Duration.ofSeconds(30));
            assertEquals(expected, Results.take("inline"));

            RemoteRegion target = fabric.callReturn(dest, () -> Fabric.current().allocate(4096, RemoteAccess.WRITE).remote());
            LocalRegion source = fabric.allocate(4096, RemoteAccess.NONE);
            MemorySegment.copy(MemorySegment.ofArray(payload), 0, source.segment(), 0, payload.length);
            Synchronizer sent = new Synchronizer(Synchronizer.Mode.SENT);
            fabric.callBuffer(dest, buffer -> Results.put("written", crc(buffer)), source, 0, target, 100,
                    payload.length, sent);
            sent.await(Duration.ofSeconds(30));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!Results.has("written") && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertEquals(expected, Results.take("written"));

            LocalRegion readable = fabric.allocate(4096, RemoteAccess.READ);
            MemorySegment.copy(MemorySegment.ofArray(payload), 0, readable.segment(), 10, payload.length);
            fabric.callBuffer(dest, buffer -> Results.put("read", crc(buffer)), readable.remote(), 10, payload.length,
                    consumed);
            consumed.await(Duration.ofSeconds(30));
            assertEquals(expected, Results.take("read"));
        }
    }

    @Test
    void shortCallsWithObjectCapturesLeaveNoStrayHeaderForAnIdleReceiver() throws Exception {
        // Each call is consumed before the next is sent, so the receiver polls the next header while the sender is
        // idle: a stray byte past a record (0x89 has the published bit) would poison the inbox. Record lengths of
        // every residue modulo the record alignment come by.
        try (LocalJob job = new LocalJob(fixture(), 2, 1, MessengerConfig.defaults())) {
            job.rank(1).startHandlerThreads();
            Fabric fabric = job.rank(0);
            ThreadId dest = new ThreadId(1, 0);
            Synchronizer consumed = new Synchronizer(Synchronizer.Mode.CONSUMED);
            for (int size = 1; size <= 130; size++) {
                byte[] bytes = new byte[size];
                java.util.Arrays.fill(bytes, (byte) 0x89);
                String key = "short" + size;
                fabric.call(dest, () -> Results.put(key, bytes.length), consumed);
                consumed.await(Duration.ofSeconds(10));
                assertEquals(size, Results.take(key), "call with " + size + " captured bytes");
            }
        }
    }

    /** A place where functions run by handler threads leave results for the test thread. */
    public static final class Results {
        private static final java.util.concurrent.ConcurrentHashMap<String, Long> VALUES = new java.util.concurrent.ConcurrentHashMap<>();

        static void put(String key, long value) {
            VALUES.put(key, value);
        }

        static boolean has(String key) {
            return VALUES.containsKey(key);
        }

        static long take(String key) {
            Long value = VALUES.remove(key);
            if (value == null) {
                throw new AssertionError("no result '" + key + "'");
            }
            return value;
        }
    }

    @Test
    void callReturnBlockingAsyncAndRemoteFailures() throws Exception {
        try (LocalJob job = new LocalJob(fixture(), 2, 2, MessengerConfig.defaults())) {
            job.rank(1).startHandlerThreads();
            Fabric fabric = job.rank(0);
            ThreadId dest = new ThreadId(1, 1);
            long base = 40;
            assertEquals(42L, fabric.callReturn(dest, () -> base + 2));
            assertEquals("rank 1", fabric.callReturn(dest, () -> "rank " + Fabric.current().rank()));
            assertArrayEquals(new long[] {1, 2, 3}, fabric.callReturn(dest, () -> new long[] {1, 2, 3}));
            RemoteInvocationException thrown = assertThrows(RemoteInvocationException.class,
                    () -> fabric.callReturn(dest, () -> {
                        throw new IllegalStateException("bad input 17");
                    }));
            assertTrue(thrown.getMessage().contains("bad input 17"), thrown.getMessage());
            // Larger than a 1 KiB packet: the result streams back through the port.
            assertEquals("x".repeat(2000), fabric.callReturn(dest, () -> "x".repeat(2000)));
            List<CompletableFuture<Long>> futures = new ArrayList<>();
            for (long i = 0; i < 300; i++) {
                long value = i;
                futures.add(fabric.callReturnAsync(new ThreadId(1, (int) (i % 2)), () -> value * value));
            }
            for (int i = 0; i < futures.size(); i++) {
                assertEquals((long) i * i, futures.get(i).get(30, TimeUnit.SECONDS));
            }
        }
    }

    @Test
    void aFailedAsyncCallFailsItsFutureAndLaterAsyncCallsStillComplete() throws Exception {
        try (LocalJob job = new LocalJob(fixture(), 2, 1, MessengerConfig.defaults())) {
            job.rank(1).startHandlerThreads();
            Fabric fabric = job.rank(0);
            ThreadId dest = new ThreadId(1, 0);
            // Awaited through dependent stages: waiting on a stage collects the reply (no helper thread, no processCalls).
            CompletableFuture<Long> failed = fabric.callReturnAsync(dest, () -> {
                throw new IllegalStateException("bad input 23");
            });
            ExecutionException thrown = assertThrows(ExecutionException.class,
                    () -> failed.thenApply(v -> v).get(10, TimeUnit.SECONDS));
            assertInstanceOf(RemoteInvocationException.class, thrown.getCause());
            assertTrue(thrown.getCause().getMessage().contains("bad input 23"), thrown.getCause().getMessage());
            for (int round = 0; round < 3; round++) {
                List<CompletableFuture<Long>> later = new ArrayList<>();
                for (long i = 0; i < 50; i++) {
                    long value = i + round;
                    later.add(fabric.callReturnAsync(dest, () -> value * 3).thenApply(v -> v));
                }
                for (int i = 0; i < later.size(); i++) {
                    assertEquals((i + round) * 3L, later.get(i).get(10, TimeUnit.SECONDS));
                }
                assertThrows(ExecutionException.class, () -> fabric.callReturnAsync(dest, () -> {
                    throw new IllegalArgumentException("again");
                }).thenApply(v -> v).get(10, TimeUnit.SECONDS));
            }
        }
    }

    @Test
    void aCallReturnAsyncToItselfCompletesWithoutProcessCallsAndKeepsCallOrder() throws Exception {
        Object[][] contexts = LocalJob.inboxes(1, 2);
        try (LocalJob job = new LocalJob(fixture(), 1, 2, MessengerConfig.defaults())) {
            job.runWorkers(contexts, (fabric, index) -> {
                ThreadId self = fabric.self();
                for (long s = 0; s < 5; s++) {
                    long sequence = s;
                    fabric.call(self, (RemoteContextConsumer<Inbox>) box -> box.record(index, sequence), null);
                }
                // Runs after the five calls made before it, as calls from one thread to one destination do.
                CompletableFuture<Long> received = fabric.callReturnAsync(self,
                        () -> ((Inbox) Fabric.currentContext()).received);
                assertTrue(received.isDone(), "a call to itself completes before callReturnAsync returns");
                assertEquals(5L, received.join());
                CompletableFuture<Long> failed = fabric.callReturnAsync(self, () -> {
                    throw new IllegalStateException("self-inflicted");
                });
                CompletionException thrown = assertThrows(CompletionException.class, failed::join);
                assertInstanceOf(RemoteInvocationException.class, thrown.getCause());
                assertEquals(7L, fabric.callReturnAsync(self, () -> 7L).orTimeout(10, TimeUnit.SECONDS).join());
                // From inside a call it runs: the call to itself runs after the current one; waiting there fails fast.
                fabric.call(self, (RemoteContextConsumer<Inbox>) box -> {
                    Fabric here = Fabric.current();
                    CompletableFuture<Long> later = here.callReturnAsync(here.self(), () -> 11L);
                    try {
                        later.join();
                        box.error = "joined a call to itself from inside a call";
                    } catch (IllegalStateException expected) {
                        box.note = later;
                    }
                }, null);
                Inbox inbox = Fabric.currentContext();
                LocalJob.processUntil(fabric, () -> inbox.note instanceof CompletableFuture<?> f && f.isDone(),
                        "the call to itself made by a call");
                assertEquals(11L, ((CompletableFuture<?>) inbox.note).join());
            });
            for (Object context : contexts[0]) {
                assertNull(((Inbox) context).error);
            }
        }
    }

    @Test
    void sixtyFourAsyncCallsInFlightAllCompleteWithTheirOwnResults() throws Exception {
        Object[][] contexts = LocalJob.inboxes(2, 2);
        java.util.concurrent.atomic.AtomicInteger finished = new java.util.concurrent.atomic.AtomicInteger();
        try (LocalJob job = new LocalJob(fixture(), 2, 2, MessengerConfig.defaults())) {
            job.runWorkers(contexts, (fabric, index) -> {
                int me = fabric.rank() * 2 + index;
                @SuppressWarnings("unchecked")
                CompletableFuture<Long>[] window = new CompletableFuture[64];
                long[] expected = new long[64];
                for (int i = 0; i < 20_000; i++) {
                    int at = i % 64;
                    if (window[at] != null) {
                        assertEquals(expected[at], window[at].join()); // runs incoming calls while it waits
                    }
                    long value = (long) me << 32 | i;
                    int dest = (me + 1 + i) % 4;
                    expected[at] = value + dest;
                    window[at] = fabric.callReturnAsync(new ThreadId(dest / 2, dest % 2),
                            () -> value + Fabric.current().rank() * 2L + Fabric.current().self().threadIndex());
                }
                for (int at = 0; at < 64; at++) {
                    assertEquals(expected[at], window[at].join());
                }
                finished.incrementAndGet();
                // Peers may still wait for this worker to run their last calls.
                LocalJob.processUntil(fabric, () -> finished.get() == 4, "every worker's async calls");
            });
        }
    }

    @Test
    void barriersHoldEveryWorkerUntilAllArrivedAndSumAcrossThem() throws Exception {
        int processes = 3;
        int threads = 2;
        int workers = processes * threads;
        int rounds = 300;
        java.util.concurrent.atomic.AtomicIntegerArray arrived = new java.util.concurrent.atomic.AtomicIntegerArray(rounds);
        java.util.concurrent.atomic.AtomicReference<String> early = new java.util.concurrent.atomic.AtomicReference<>();
        Object[][] contexts = LocalJob.inboxes(processes, threads);
        try (LocalJob job = new LocalJob(fixture(), processes, threads, MessengerConfig.defaults())) {
            job.runWorkers(contexts, (fabric, index) -> {
                int me = fabric.rank() * threads + index;
                int next = (me + 1) % workers;
                Inbox inbox = Fabric.currentContext();
                for (int k = 0; k < rounds; k++) {
                    // The neighbour may still be before the barrier, or waiting in it: either way it runs this call.
                    long sequence = k;
                    fabric.call(new ThreadId(next / threads, next % threads),
                            (RemoteContextConsumer<Inbox>) box -> box.record(me, sequence), null);
                    arrived.incrementAndGet(k);
                    if (k % 3 == 2) {
                        long expected = (long) workers * (workers - 1) / 2 + (long) workers * k;
                        assertEquals(expected, fabric.allReduceSum(me + k), "sum at barrier " + k);
                    } else {
                        fabric.barrier();
                    }
                    int seen = arrived.get(k);
                    if (seen != workers) {
                        early.compareAndSet(null, "worker " + me + " passed barrier " + k + " when " + seen + " of "
                                + workers + " had arrived");
                    }
                }
                LocalJob.processUntil(fabric, () -> inbox.received == rounds, "the neighbour's calls");
            });
            assertNull(early.get());
            for (Object[] rank : contexts) {
                for (Object context : rank) {
                    assertNull(((Inbox) context).error);
                }
            }
        }
    }

    @Test
    void aBarrierThatAWorkerNeverReachesTimesOutNamingIt() throws Exception {
        try (LocalJob job = new LocalJob(fixture(), 2, 1, MessengerConfig.defaults())) {
            IllegalStateException notAWorker = assertThrows(IllegalStateException.class, () -> job.rank(1).barrier());
            assertTrue(notAWorker.getMessage().contains("not an attached worker"), notAWorker.getMessage());
            job.runWorkers(null, (fabric, index) -> {
                if (fabric.rank() == 0) {
                    io.fabricrpc.api.BarrierTimeoutException timeout = assertThrows(
                            io.fabricrpc.api.BarrierTimeoutException.class, () -> fabric.barrier(Duration.ofMillis(300)));
                    String message = timeout.getMessage();
                    assertTrue(message.contains("generation 1 of 2 workers") && message.contains("300 ms")
                            && message.contains("1 of 2 arrived, missing [" + new ThreadId(1, 0) + "]"), message);
                }
            });
        }
    }

    @Test
    void aBarrierEndsWithPeerFailedExceptionWhenAProcessDies() throws Exception {
        LocalJob job = new LocalJob(fixture(), 3, 1, MessengerConfig.defaults());
        java.util.Map<Integer, Throwable> outcomes = new java.util.concurrent.ConcurrentHashMap<>();
        try {
            List<Thread> waiting = new ArrayList<>();
            for (int rank = 0; rank < 2; rank++) {
                Fabric fabric = job.rank(rank);
                int r = rank;
                waiting.add(Thread.ofPlatform().start(() -> {
                    fabric.attach(0);
                    try {
                        fabric.barrier(Duration.ofSeconds(60));
                        outcomes.put(r, new AssertionError("rank " + r + " passed a barrier rank 2 never reached"));
                    } catch (Throwable t) {
                        outcomes.put(r, t);
                    }
                }));
            }
            Thread.sleep(300);
            long crashed = System.nanoTime();
            io.fabricrpc.fabric.ControlPlaneHooks.crash(((FabricRuntime) job.rank(2)).controlPlane());
            join(waiting.toArray(Thread[]::new));
            long millis = (System.nanoTime() - crashed) / 1_000_000;
            for (int rank = 0; rank < 2; rank++) {
                Throwable outcome = outcomes.get(rank);
                assertInstanceOf(io.fabricrpc.api.PeerFailedException.class, outcome);
                assertEquals(2, ((io.fabricrpc.api.PeerFailedException) outcome).rank(), outcome.toString());
                assertTrue(outcome.getMessage().contains("barrier generation 1 of 3 workers cannot complete"),
                        outcome.getMessage());
            }
            assertTrue(millis < 30_000, "the barrier ended " + millis + " ms after the crash");
        } finally {
            CompletableFuture<Void> first = CompletableFuture.runAsync(() -> job.rank(0).close());
            CompletableFuture<Void> second = CompletableFuture.runAsync(() -> job.rank(1).close());
            try {
                job.rank(2).close(); // its control plane is gone: closing reports that, and still releases the rest
            } catch (RuntimeException expected) {
                // the crashed process cannot take part in the shutdown barrier
            }
            first.get(60, TimeUnit.SECONDS);
            second.get(60, TimeUnit.SECONDS);
        }
    }

    @Test
    void typedContextCallsNeedNoCastAndAMissingOrWrongContextFailsClearly() throws Exception {
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        // (1, 0) has an Inbox, (0, 1) a context of another type, (1, 1) none.
        Object[][] contexts = {{new Inbox(2), new StringBuilder("not an inbox")}, {new Inbox(2), null}};
        java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        try (LocalJob job = new LocalJob(fixture(), 2, 2, MessengerConfig.defaults())) {
            job.rank(1).onError((thread, error) -> errors.add(error));
            job.runWorkers(contexts, (fabric, index) -> {
                if (fabric.rank() != 0 || index != 0) {
                    LocalJob.processUntil(fabric, done::get, "the end of the test");
                    return;
                }
                try {
                    io.fabricrpc.api.ContextCalls<Inbox> inboxes = fabric.context(Inbox.class);
                    ThreadId inbox = new ThreadId(1, 0);
                    for (long s = 0; s < 100; s++) {
                        long sequence = s;
                        assertTrue(inboxes.call(inbox, box -> box.record(0, sequence))); // no cast needed
                    }
                    long received = inboxes.callReturn(inbox, box -> box.received);
                    assertEquals(100L, received);
                    CompletableFuture<Long> later = inboxes.callReturnAsync(inbox, box -> box.received);
                    assertEquals(100L, later.join());

                    ThreadId other = new ThreadId(0, 1);
                    RemoteInvocationException wrong = assertThrows(RemoteInvocationException.class,
                            () -> inboxes.callReturn(other, box -> box.received));
                    assertTrue(wrong.getMessage().contains("WrongContextException")
                            && wrong.getMessage().contains(Inbox.class.getName())
                            && wrong.getMessage().contains("java.lang.StringBuilder")
                            && wrong.getMessage().contains("-> " + other), wrong.getMessage());
                    ThreadId none = new ThreadId(1, 1);
                    CompletionException missing = assertThrows(CompletionException.class,
                            () -> inboxes.callReturnAsync(none, box -> box.received).join());
                    assertTrue(missing.getCause().getMessage().contains("has no context object")
                            && missing.getCause().getMessage().contains("-> " + none), missing.getCause().getMessage());

                    // One-way: the destination's error listener hears it; the old cast form reaches it the same way.
                    inboxes.call(none, box -> box.record(0, 0));
                    fabric.call(none, (RemoteContextConsumer<Inbox>) box -> box.record(0, 1), null);
                    // Three at rank 1: the failed callReturnAsync is reported there too, then the two one-way calls.
                    LocalJob.processUntil(fabric, () -> errors.size() >= 3, "the one-way calls' errors");
                } finally {
                    done.set(true);
                }
            });
            assertEquals(100, ((Inbox) contexts[1][0]).received);
            assertNull(((Inbox) contexts[1][0]).error);
            assertEquals(3, errors.size(), errors.toString());
            for (Throwable error : errors) {
                assertInstanceOf(io.fabricrpc.serialization.WrongContextException.class, error);
                assertTrue(error.getMessage().contains(Inbox.class.getName())
                        && error.getMessage().contains("-> " + new ThreadId(1, 1)), error.getMessage());
            }
        }
    }

    /**
     * With 4 workers the tree from worker 0 goes through rank 2 to reach rank 3. Once rank 2 is declared failed, a
     * CONSUMED broadcast routes around it and completes: every live worker runs it, the fenced one does not.
     */
    @Test
    void aBroadcastRoutesAroundARankDeclaredFailed() throws Exception {
        Object[][] contexts = LocalJob.inboxes(4, 1);
        AtomicLong finished = new AtomicLong();
        try (LocalJob job = new LocalJob(fixture(), 4, 1, MessengerConfig.defaults())) {
            job.runWorkers(contexts, (fabric, index) -> {
                io.fabricrpc.fabric.ControlPlane plane = ((FabricRuntime) fabric).controlPlane();
                switch (fabric.rank()) {
                    case 2 -> { // stalled: heartbeats stop and it runs nothing until the others are done
                        io.fabricrpc.fabric.FaultInjection.muteHeartbeats(plane);
                        while (finished.get() == 0) {
                            Thread.onSpinWait();
                        }
                    }
                    case 0 -> {
                        LocalJob.processUntil(fabric, () -> plane.failure(2) != null, "the verdict on rank 2");
                        Synchronizer consumed = new Synchronizer(Synchronizer.Mode.CONSUMED);
                        for (int round = 0; round < 3; round++) {
                            fabric.broadcast(() -> ((Inbox) Fabric.currentContext()).broadcasts++, consumed);
                        }
                        consumed.await(Duration.ofSeconds(30));
                        finished.set(1);
                    }
                    default -> LocalJob.processUntil(fabric, () -> finished.get() == 1, "rank 0's broadcasts");
                }
            });
            assertEquals(3, ((Inbox) contexts[0][0]).broadcasts, "the root");
            assertEquals(3, ((Inbox) contexts[1][0]).broadcasts, "rank 1");
            assertEquals(0, ((Inbox) contexts[2][0]).broadcasts, "the rank declared failed");
            assertEquals(3, ((Inbox) contexts[3][0]).broadcasts, "rank 3, below the failed rank in the tree");
            assertThrows(RuntimeException.class, job.rank(2)::close);
        }
    }

    @Test
    void broadcastRunsOnEveryWorkerOfEveryProcessExactlyOnce() throws Exception {
        int processes = 2;
        int threads = 4;
        Object[][] contexts = LocalJob.inboxes(processes, threads);
        AtomicLong finished = new AtomicLong();
        try (LocalJob job = new LocalJob(fixture(), processes, threads, MessengerConfig.defaults())) {
            byte[] payload = randomBytes(777, 2);
            long expected = crc(MemorySegment.ofArray(payload));
            job.runWorkers(contexts, (fabric, index) -> {
                Inbox inbox = Fabric.currentContext();
                if (fabric.rank() == 1 && index == 2) {
                    Synchronizer consumed = new Synchronizer(Synchronizer.Mode.CONSUMED);
                    for (int round = 0; round < 10; round++) {
                        fabric.broadcast(() -> ((Inbox) Fabric.currentContext()).broadcasts++, consumed);
                    }
                    MessagingException tooBig = assertThrows(MessagingException.class, () -> fabric.broadcastBuffer(
                            buffer -> ((Inbox) Fabric.currentContext()).checksum = 1, MemorySegment.ofArray(new byte[10 << 20]),
                            0, 10 << 20, consumed));
                    assertTrue(tooBig.getMessage().contains("10485760") && tooBig.getMessage().contains("chunkSize"),
                            tooBig.getMessage());
                    fabric.broadcastBuffer(buffer -> ((Inbox) Fabric.currentContext()).checksum = crc(buffer),
                            MemorySegment.ofArray(payload), 0, payload.length, consumed);
                    consumed.await(Duration.ofSeconds(60));
                    LocalRegion readable = fabric.allocate(1024, RemoteAccess.READ);
                    MemorySegment.copy(MemorySegment.ofArray(payload), 0, readable.segment(), 0, 500);
                    fabric.broadcastBuffer(buffer -> ((Inbox) Fabric.currentContext()).received += crc(buffer),
                            readable.remote(), 0, 500, consumed);
                    consumed.await(Duration.ofSeconds(60));
                    finished.set(1);
                }
                LocalJob.processUntil(fabric, () -> finished.get() == 1 && inbox.received != 0, "the broadcasts");
            });
            long readCrc = crc(MemorySegment.ofArray(payload).asSlice(0, 500));
            for (Object[] rank : contexts) {
                for (Object context : rank) {
                    Inbox inbox = (Inbox) context;
                    assertEquals(10, inbox.broadcasts, "each broadcast ran once on each worker");
                    assertEquals(expected, inbox.checksum);
                    assertEquals(readCrc, inbox.received);
                }
            }
        }
    }

    @Test
    void failPolicyReturnsFalseAndRetryAsyncQueuesUntilFlushed() throws Exception {
        MessengerConfig fail = MessengerConfig.defaults().withChunks(4096, 1, 2).withFullPolicy(FullPolicy.FAIL);
        try (LocalJob job = new LocalJob(fixture(), 2, 1, fail)) {
            Fabric fabric = job.rank(0);
            ThreadId dest = new ThreadId(1, 0);
            long sent = 0;
            while (fabric.call(dest, () -> { })) {
                sent++;
                assertTrue(sent < 100_000);
            }
            assertTrue(sent > 100, "sent " + sent + " before the buffers filled");
            job.rank(1).startHandlerThreads();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!fabric.call(dest, () -> { })) {
                assertTrue(System.nanoTime() < deadline, "buffers never drained");
                Thread.sleep(1);
            }
        }
        MessengerConfig async = MessengerConfig.defaults().withChunks(4096, 1, 2).withFullPolicy(FullPolicy.RETRY_ASYNC);
        Object[][] contexts = LocalJob.inboxes(2, 1);
        try (LocalJob job = new LocalJob(fixture(), 2, 1, async)) {
            Fabric fabric = job.rank(0);
            ThreadId dest = new ThreadId(1, 0);
            for (long i = 0; i < 5000; i++) {
                long s = i;
                assertTrue(fabric.call(dest, (RemoteContextConsumer<Inbox>) box -> box.record(0, s), null));
            }
            Inbox inbox = (Inbox) contexts[1][0];
            Thread receiver = Thread.ofPlatform().start(() -> {
                job.rank(1).attach(0, inbox);
                LocalJob.processUntil(job.rank(1), () -> inbox.received == 5000, "queued calls");
            });
            fabric.flush();
            receiver.join(60_000);
            assertNull(inbox.error);
            assertEquals(5000, inbox.received);
        }
    }

    /**
     * RETRY_ASYNC under stress: a receiver that keeps pausing makes the sender's calls go direct, queue, drain (by the
     * sender and by the agent) and go direct again, many times over; every call runs once, in order, and a CONSUMED
     * synchronizer on the last call counts the queued ones.
     */
    @Test
    void retryAsyncCallsStayExactlyOnceAndInOrderAcrossTheQueue() throws Exception {
        MessengerConfig async = MessengerConfig.defaults().withChunks(4096, 1, 2).withFullPolicy(FullPolicy.RETRY_ASYNC);
        Object[][] contexts = LocalJob.inboxes(2, 1);
        long calls = 200_000;
        try (LocalJob job = new LocalJob(fixture(), 2, 1, async)) {
            Fabric fabric = job.rank(0);
            ThreadId dest = new ThreadId(1, 0);
            Inbox inbox = (Inbox) contexts[1][0];
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            Thread receiver = Thread.ofPlatform().start(() -> {
                job.rank(1).attach(0, inbox);
                long ran = 0;
                while (!stop.get()) {
                    ran += job.rank(1).processCalls();
                    if (ran > 3_000) {
                        ran = 0;
                        java.util.concurrent.locks.LockSupport.parkNanos(500_000); // the sender's chunks fill meanwhile
                    }
                }
            });
            try {
                Synchronizer sync = new Synchronizer(Synchronizer.Mode.CONSUMED);
                for (long i = 0; i < calls; i++) {
                    long s = i;
                    assertTrue(fabric.call(dest, (RemoteContextConsumer<Inbox>) box -> box.record(0, s),
                            i == calls - 1 ? sync : null));
                }
                sync.await(Duration.ofSeconds(60));
                // CONSUMED: the receiver ran the last call, so every call (its pushes follow the handler's writes).
                assertEquals(calls, inbox.received, "the synchronizer counted down before the last call ran");
            } finally {
                stop.set(true);
                receiver.join(60_000);
            }
            assertNull(inbox.error);
            assertEquals(calls, inbox.received);
        }
    }

    /** Recurses until the stack is gone: a remote lambda that throws StackOverflowError. */
    static long recurse(long depth) {
        return depth == Long.MIN_VALUE ? 0 : 1 + recurse(depth + 1);
    }

    @Test
    void anErrorThrownByARemoteLambdaIsReportedAndTheWorkerKeepsRunningCalls() throws Exception {
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        try (LocalJob job = new LocalJob(fixture(), 2, 1, MessengerConfig.defaults())) {
            job.rank(1).onError((thread, error) -> errors.add(error));
            job.rank(1).startHandlerThreads();
            Fabric fabric = job.rank(0);
            ThreadId dest = new ThreadId(1, 0);
            // One-way: the error goes to the destination's listener, and the calls behind it still run.
            fabric.call(dest, () -> recurse(0));
            assertEquals(7L, fabric.callReturn(dest, () -> 7L), "the worker survived the StackOverflowError");
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (errors.stream().noneMatch(e -> e instanceof StackOverflowError) && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertTrue(errors.stream().anyMatch(e -> e instanceof StackOverflowError), errors.toString());
            // Waiting for an answer: the caller gets the Error as a remote failure instead of a hang.
            RemoteInvocationException thrown = assertThrows(RemoteInvocationException.class,
                    () -> fabric.callReturn(dest, () -> recurse(0)));
            assertTrue(thrown.getMessage().contains("StackOverflowError"), thrown.getMessage());
            assertEquals(8L, fabric.callReturn(dest, () -> 8L));
        }
    }

    /**
     * Calls refused at the sender fail there; a record the receiver cannot trust (an unknown function id, an unknown
     * invocation kind) drops the channel: nothing behind it runs, and the sender's next call fails naming the reason
     * and how many accepted calls were not run, as does a synchronizer waiting on that channel.
     */
    @Test
    void badCallsFailClearlyAndAnUntrustedRecordDropsTheChannel() throws Exception {
        for (int kind : new int[] {InvocationRecords.CALL, 29}) {
            ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
            Object[][] contexts = LocalJob.inboxes(2, 1);
            try (LocalJob job = new LocalJob(fixture(), 2, 1, MessengerConfig.defaults())) {
                job.rank(1).onError((thread, error) -> errors.add(error));
                Fabric fabric = job.rank(0);
                ThreadId dest = new ThreadId(1, 0);
                Inbox inbox = (Inbox) contexts[1][0];

                Object unregistered = new java.util.ArrayList<String>();
                UnregisteredClassException refused = assertThrows(UnregisteredClassException.class,
                        () -> fabric.call(dest, () -> unregistered.hashCode()));
                assertTrue(refused.getMessage().contains("java.util.ArrayList"), refused.getMessage());

                byte[] huge = new byte[200_000];
                MessagingException oversize = assertThrows(MessagingException.class,
                        () -> fabric.call(dest, () -> Results.put("huge", huge.length)));
                assertTrue(oversize.getMessage().contains("65536"), oversize.getMessage());

                fabric.call(dest, (RemoteContextConsumer<Inbox>) box -> box.record(0, 0), null);
                // A call record naming a function id this link never defined (tag 5 = id 2), or a kind no one knows.
                assertTrue(OneSidedCalls.sendBytes(((FabricRuntime) fabric).threadContext(),
                        dest.globalIndex(fabric.threadsPerProcess()), kind,
                        kind == InvocationRecords.CALL ? new byte[] {4, 0} : new byte[] {1, 2, 3}));
                Synchronizer consumed = new Synchronizer(Synchronizer.Mode.CONSUMED);
                fabric.call(dest, (RemoteContextConsumer<Inbox>) box -> box.record(0, 1), consumed); // never runs
                Thread receiver = Thread.ofPlatform().start(() -> {
                    job.rank(1).attach(0, inbox);
                    LocalJob.processUntil(job.rank(1), () -> !errors.isEmpty(), "the dropped channel");
                    for (int i = 0; i < 100; i++) {
                        job.rank(1).processCalls();
                    }
                });
                receiver.join(60_000);
                assertEquals(1, inbox.received, "only the good call before the untrusted record ran");
                assertEquals(1, errors.size(), "reported once: " + errors);
                Throwable error = errors.peek();
                assertInstanceOf(io.fabricrpc.messaging.RecordRejectedException.class, error);
                if (kind == InvocationRecords.CALL) {
                    assertInstanceOf(UnknownFunctionException.class, error.getCause(), errors.toString());
                } else {
                    assertTrue(error.getMessage().contains("unknown invocation kind 29"), errors.toString());
                }
                io.fabricrpc.messaging.PoisonReason reason = kind == InvocationRecords.CALL
                        ? io.fabricrpc.messaging.PoisonReason.UNKNOWN_FUNCTION
                        : io.fabricrpc.messaging.PoisonReason.UNKNOWN_KIND;
                io.fabricrpc.messaging.ChannelPoisonedException waited = assertThrows(
                        io.fabricrpc.messaging.ChannelPoisonedException.class, () -> consumed.await(Duration.ofSeconds(30)));
                assertEquals(reason, waited.reason(), waited.getMessage());
                io.fabricrpc.messaging.ChannelPoisonedException e = assertThrows(
                        io.fabricrpc.messaging.ChannelPoisonedException.class,
                        () -> fabric.call(dest, (RemoteContextConsumer<Inbox>) box -> box.record(0, 2), null));
                assertEquals(reason, e.reason(), e.getMessage());
                assertEquals(1, e.ranBeforePoisoning());
                assertEquals(2, e.notRun(), "the untrusted record and the call behind it: " + e.getMessage());
                assertTrue(e.getMessage().contains("rank 1, thread 0"), e.getMessage());
            }
        }
    }

    /** The failure a CONSUMED synchronizer reports keeps a long message whole: the method it names and the reason. */
    @Test
    void aRemoteCallsFailedMessageKeepsTheMethodNameAndTheReason() throws Exception {
        String method = "io.fabricrpc.example.SomeRatherLongApplicationClassName.lambda$aMethodWithAFairlyLongName$12";
        String reason = "refused because the reason comes last";
        try (LocalJob job = new LocalJob(fixture(), 2, 1, MessengerConfig.defaults())) {
            job.rank(1).startHandlerThreads();
            Fabric fabric = job.rank(0);
            Synchronizer consumed = new Synchronizer(Synchronizer.Mode.CONSUMED);
            fabric.call(new ThreadId(1, 0), () -> {
                throw new IllegalStateException("function " + method + " " + reason);
            }, consumed);
            Synchronizer.RemoteCallsFailedException e = assertThrows(Synchronizer.RemoteCallsFailedException.class,
                    () -> consumed.await(Duration.ofSeconds(30)));
            assertTrue(e.getMessage().contains(IllegalStateException.class.getName() + ": function " + method + " "
                    + reason), e.getMessage());
        }
    }

    /** A CONSUMED synchronizer fails when a call it counts threw remotely; the failure is reported once. */
    @Test
    void aConsumedSynchronizerFailsWithTheRemoteFailure() throws Exception {
        try (LocalJob job = new LocalJob(fixture(), 2, 1, MessengerConfig.defaults())) {
            ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
            job.rank(1).onError((thread, error) -> errors.add(error));
            job.rank(1).startHandlerThreads();
            Fabric fabric = job.rank(0);
            ThreadId dest = new ThreadId(1, 0);
            Synchronizer consumed = new Synchronizer(Synchronizer.Mode.CONSUMED);
            fabric.call(dest, () -> Results.put("before", 1), consumed);
            fabric.call(dest, () -> {
                throw new IllegalStateException("the remote lambda fails");
            }, consumed);
            fabric.call(dest, () -> Results.put("behind", 2), consumed);
            Synchronizer.RemoteCallsFailedException e = assertThrows(Synchronizer.RemoteCallsFailedException.class,
                    () -> consumed.await(Duration.ofSeconds(30)));
            RemoteInvocationException remote = assertInstanceOf(RemoteInvocationException.class, e.getCause());
            assertEquals(IllegalStateException.class.getName(), remote.remoteClassName());
            assertEquals("the remote lambda fails", remote.remoteMessage());
            assertTrue(e.getMessage().startsWith("1 call to worker 1/0"), e.getMessage());
            assertEquals(1, Results.take("before"));
            assertEquals(2, Results.take("behind"), "a throwing call does not stop the calls behind it");
            assertEquals(1, errors.size(), errors.toString());
            fabric.call(dest, () -> Results.put("after", 3), consumed);
            consumed.await(Duration.ofSeconds(30)); // reported once: the next wait is clean
            assertEquals(3, Results.take("after"));
        }
    }

    @Test
    void aWrongSecretIsRefusedAndTheJobStillForms() throws Exception {
        int port = LocalJob.freePort();
        CompletableFuture<Fabric> coordinator = CompletableFuture.supplyAsync(() -> Fabric.join(
                LocalJob.config(fixture(), 0, 2, 1, port, LocalJob.SECRET, MessengerConfig.defaults())));
        Thread.sleep(300);
        FabricConfig impostor = LocalJob.config(fixture(), 1, 2, 1, port, "not-the-job-secret-at-all", MessengerConfig.defaults());
        JoinRefusedException refused = assertThrows(JoinRefusedException.class, () -> Fabric.join(impostor));
        assertTrue(refused.getMessage().toLowerCase().contains("secret"), refused.getMessage());
        Fabric member = Fabric.join(LocalJob.config(fixture(), 1, 2, 1, port, LocalJob.SECRET, MessengerConfig.defaults()));
        Fabric root = coordinator.get(30, TimeUnit.SECONDS);
        member.startHandlerThreads();
        assertEquals(7, root.callReturn(new ThreadId(1, 0), () -> 7));
        CompletableFuture<Void> closing = CompletableFuture.runAsync(member::close);
        root.close();
        closing.get(30, TimeUnit.SECONDS);
        assertFalse(closing.isCompletedExceptionally());
    }

}
