package io.fabricrpc.invocation;

import io.fabricrpc.fabric.LocalLauncher;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.mailbox.AllPortsBusyException;
import io.fabricrpc.mailbox.MailboxClient;
import io.fabricrpc.mailbox.Port;
import io.fabricrpc.api.MessengerConfig;
import io.fabricrpc.api.RemoteInvocationException;
import io.fabricrpc.serialization.ResultCodec;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** callReturn over the mailbox ports: sharing, exhaustion, streaming, hostile packets. Run by each transport. */
public abstract class MailboxCallsTest {
    protected abstract TransportFixture fixture();

    private TransportFixture with(Map<String, String> keys) {
        return fixture().with(keys);
    }

    /** Per destination worker: how many times each (caller, sequence) ran; exactly once means every count is 1. */
    static final AtomicReferenceArray<AtomicLong> RUNS = new AtomicReferenceArray<>(1 << 16);

    static long run(int key) {
        return RUNS.get(key).incrementAndGet();
    }

    @Test
    void manyCallerThreadsSharePortsAndEveryCallRunsExactlyOnce() throws Exception {
        int callers = 8;
        int perCaller = 2_000;
        for (int i = 0; i < callers * perCaller; i++) {
            RUNS.set(i, new AtomicLong());
        }
        try (LocalJob job = new LocalJob(fixture(), 3, 2, MessengerConfig.defaults())) {
            job.rank(1).startHandlerThreads();
            job.rank(2).startHandlerThreads();
            Fabric fabric = job.rank(0);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (int c = 0; c < callers; c++) {
                int caller = c;
                threads.add(Thread.ofPlatform().start(() -> {
                    try {
                        start.await();
                        for (int s = 0; s < perCaller; s++) {
                            int key = caller * perCaller + s;
                            ThreadId dest = new ThreadId(1 + (s + caller) % 2, s % 2);
                            long count = s % 3 == 0
                                    ? fabric.callReturnAsync(dest, () -> run(key) * 1000 + Fabric.current().rank()).join()
                                    : fabric.callReturn(dest, () -> run(key) * 1000 + Fabric.current().rank());
                            assertEquals(1000L + dest.rank(), count, "call " + key + " ran where it was sent, once");
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                }));
            }
            start.countDown();
            for (Thread thread : threads) {
                thread.join(120_000);
            }
            assertNull(failure.get());
            for (int i = 0; i < callers * perCaller; i++) {
                assertEquals(1, RUNS.get(i).get(), "runs of call " + i);
            }
        }
    }

    @Test
    void aChannelOpenedWhileTheDestinationIsStillStartingServesTheCall() throws Exception {
        // A peer may open a channel as soon as the job is formed, before the destination's runtime is built.
        int port = LocalJob.freePort();
        CountDownLatch paused = new CountDownLatch(1);
        CountDownLatch resume = new CountDownLatch(1);
        RuntimeBootstrap.afterJoinForTest = rank -> {
            if (rank == 1) {
                paused.countDown();
                try {
                    resume.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };
        TransportFixture quickOpen = with(Map.of(MailboxChannelSet.OPEN_TIMEOUT_KEY, "5000"));
        CompletableFuture<Fabric> starting = CompletableFuture.supplyAsync(() -> Fabric.join(
                LocalJob.config(quickOpen, 1, 2, 1, port, LocalJob.SECRET, MessengerConfig.defaults())));
        Fabric caller = null;
        Fabric destination = null;
        try {
            caller = Fabric.join(LocalJob.config(quickOpen, 0, 2, 1, port, LocalJob.SECRET, MessengerConfig.defaults()));
            assertTrue(paused.await(30, TimeUnit.SECONDS), "rank 1 reached the pause after its join");
            // The OPEN round trip happens here, served by rank 1's service thread while rank 1 is still starting.
            CompletableFuture<Long> result = caller.callReturnAsync(new ThreadId(1, 0), () -> 42L);
            resume.countDown();
            destination = starting.get(30, TimeUnit.SECONDS);
            destination.startHandlerThreads();
            assertEquals(42L, result.get(30, TimeUnit.SECONDS));
        } finally {
            RuntimeBootstrap.afterJoinForTest = rank -> { };
            resume.countDown();
            if (destination == null) {
                destination = starting.handle((f, e) -> f).get(30, TimeUnit.SECONDS);
            }
            List<CompletableFuture<Void>> closing = new ArrayList<>(); // together: close is a job-wide barrier
            for (Fabric fabric : new Fabric[] {caller, destination}) {
                if (fabric != null) {
                    closing.add(CompletableFuture.runAsync(fabric::close));
                }
            }
            for (CompletableFuture<Void> close : closing) {
                close.get(60, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void moreCallersThanPortsWaitForAPortAndFailClearlyPastTheBound() throws Exception {
        // 64 ports per channel; 96 callers each hold a port for a while: the rest wait, then all succeed.
        try (LocalJob job = new LocalJob(fixture(), 2, 1, MessengerConfig.defaults())) {
            job.rank(1).startHandlerThreads();
            Fabric fabric = job.rank(0);
            ThreadId dest = new ThreadId(1, 0);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            for (int c = 0; c < 96; c++) {
                long value = c;
                threads.add(Thread.ofPlatform().start(() -> {
                    try {
                        assertEquals(value, (long) fabric.callReturn(dest, () -> value));
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                }));
            }
            for (Thread thread : threads) {
                thread.join(60_000);
            }
            assertNull(failure.get());
        }
        // A destination that never answers keeps its ports; past the open bound, callers fail naming the numbers.
        try (LocalJob job = new LocalJob(with(Map.of(MailboxChannelSet.OPEN_TIMEOUT_KEY, "300")), 2, 1,
                MessengerConfig.defaults())) {
            Fabric fabric = job.rank(0);
            ThreadId silent = new ThreadId(1, 0); // nobody runs its calls
            for (int i = 0; i < 64; i++) {
                fabric.callReturnAsync(silent, () -> 1L);
            }
            long started = System.nanoTime();
            AllPortsBusyException busy = assertThrows(AllPortsBusyException.class,
                    () -> fabric.callReturn(silent, () -> 2L));
            long waited = (System.nanoTime() - started) / 1_000_000;
            assertTrue(waited >= 250 && waited < 20_000, "waited " + waited + " ms");
            assertTrue(busy.getMessage().contains("all 64 mailbox ports") && busy.getMessage().contains("300 ms"),
                    busy.getMessage());
            job.rank(1).startHandlerThreads(); // lets the parked calls finish, so the job closes at once
        }
    }

    @Test
    void callsAndResultsLargerThanAPacketStream() throws Exception {
        try (LocalJob job = new LocalJob(fixture(), 2, 2, MessengerConfig.defaults())) {
            job.rank(1).startHandlerThreads();
            Fabric fabric = job.rank(0);
            ThreadId dest = new ThreadId(1, 1);
            byte[] big = new byte[100_000];
            new Random(5).nextBytes(big);
            long[] result = fabric.callReturn(dest, () -> {
                long[] sums = new long[20_000]; // 160 KB back, 1 KiB packets
                for (int i = 0; i < sums.length; i++) {
                    sums[i] = big[i % big.length] * (long) i;
                }
                return sums;
            });
            for (int i = 0; i < result.length; i++) {
                assertEquals(big[i % big.length] * (long) i, result[i]);
            }
            assertArrayEquals(big, fabric.callReturnAsync(dest, () -> big).join());
            // Beyond the largest message: a clear failure naming the bound and its key, and the worker goes on.
            RemoteInvocationException tooLarge = assertThrows(io.fabricrpc.api.ResultTooLargeException.class,
                    () -> fabric.callReturn(dest, () -> new byte[20 << 20]));
            assertTrue(tooLarge.getMessage().contains(MailboxChannelSet.MAX_MESSAGE_KEY)
                    && tooLarge.getMessage().contains("16777216"), tooLarge.getMessage());
            assertEquals(3L, (long) fabric.callReturn(dest, () -> 3L));
        }
    }

    @Test
    void randomBytesInARequestGiveTheCallerAnErrorAndTheWorkerGoesOn() throws Exception {
        ConcurrentLinkedQueue<Throwable> reported = new ConcurrentLinkedQueue<>();
        try (LocalJob job = new LocalJob(fixture(), 2, 1, MessengerConfig.defaults())) {
            job.rank(1).onError((thread, error) -> reported.add(error));
            job.rank(1).startHandlerThreads();
            FabricRuntime fabric = (FabricRuntime) job.rank(0);
            ThreadId dest = new ThreadId(1, 0);
            assertEquals(1L, (long) fabric.callReturn(dest, () -> 1L)); // opens the channel
            MailboxClient client = fabric.mailboxes().client(1);
            ResultCodec codec = new ResultCodec(LocalJob.registry());
            Random random = new Random(42);
            int answered = 0;
            for (int round = 0; round < 300; round++) {
                byte[] junk = new byte[random.nextInt(round % 10 == 0 ? 5000 : 400)];
                random.nextBytes(junk);
                if (round % 3 == 0 && junk.length >= ReturnCalls.HEADER) { // a plausible header, a random record
                    MemorySegment header = MemorySegment.ofArray(junk);
                    header.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, ReturnCalls.SENDER,
                            ThreadId.pack(0, 0));
                    header.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, ReturnCalls.BEFORE, 0);
                    header.set(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED, ReturnCalls.FLAGS, round % 2);
                }
                try (Port port = client.open()) {
                    port.send(MemorySegment.ofArray(junk), 0, junk.length);
                    Throwable outcome = null;
                    try {
                        port.recv((message, length) -> codec.decode(message, 0, length));
                    } catch (RuntimeException e) {
                        outcome = e;
                    }
                    assertInstanceOf(RemoteInvocationException.class, outcome, "round " + round);
                    answered++;
                }
            }
            assertEquals(300, answered);
            assertEquals(7L, (long) fabric.callReturn(dest, () -> 7L), "the worker survived every junk packet");
            assertTrue(reported.size() >= 300, "each junk call is reported where it ran: " + reported.size());
        }
    }

    /** Both nested calls of the test below are running when this reaches zero. */
    static volatile CountDownLatch bothServing;

    static long[] resultWhileBothServe(int caller) {
        bothServing.countDown();
        try {
            assertTrue(bothServing.await(20, TimeUnit.SECONDS), "the other worker never served our call");
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
        long[] result = new long[8192]; // 64 KiB: 65 fragments of a 1 KiB packet
        for (int i = 0; i < result.length; i++) {
            result[i] = caller * 1_000_000L + i;
        }
        return result;
    }

    @Test
    void twoWorkersCallingEachOtherStreamResultsFromTheirNestedServes() throws Exception {
        // Each worker waits in its callReturn, serves the other's call meanwhile (both at once, by the latch) and
        // streams a many-packet result to the other, whose fragments only the other's outer wait used to take.
        bothServing = new CountDownLatch(2);
        try (LocalJob job = new LocalJob(fixture(), 2, 1, MessengerConfig.defaults(),
                config -> config.withCallTimeout(Duration.ofSeconds(5)))) {
            long started = System.nanoTime();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> workers = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                Fabric fabric = job.rank(r);
                int rank = r;
                workers.add(Thread.ofPlatform().daemon().name("worker-" + rank + ".0").start(() -> {
                    try {
                        fabric.attach(0, null);
                        long[] result = fabric.callReturn(new ThreadId(1 - rank, 0), () -> resultWhileBothServe(rank));
                        assertEquals(8192, result.length);
                        for (int i = 0; i < result.length; i++) {
                            assertEquals(rank * 1_000_000L + i, result[i], "element " + i + " of rank " + rank);
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                }));
            }
            for (Thread worker : workers) {
                worker.join(30_000); // bounds the test even if the timeouts fail to end a stall
                assertTrue(!worker.isAlive(), worker.getName() + " still in its callReturn after 30 s");
            }
            assertNull(failure.get(), () -> "a worker failed: " + failure.get());
            long millis = (System.nanoTime() - started) / 1_000_000;
            assertTrue(millis < 5_000, "both calls took " + millis + " ms: within the 5 s timeout, no stall");
            assertEquals(0, bothServing.getCount());
        }
    }

    static long checksum(byte[] data) {
        long sum = 0;
        for (int i = 0; i < data.length; i++) {
            sum = sum * 31 + data[i];
        }
        return sum;
    }

    @Test
    void twoWorkersSendingLargeCallsToEachOtherAtOnceBothFinish() throws Exception {
        // Both calls capture 40 KB (40 fragments of a 1 KiB packet): each worker serves the other's call while its
        // own request still streams, and that call makes a callReturn of its own (to rank 2) in the middle.
        CyclicBarrier together = new CyclicBarrier(2);
        try (LocalJob job = new LocalJob(fixture(), 3, 1, MessengerConfig.defaults(),
                config -> config.withCallTimeout(Duration.ofSeconds(5)))) {
            job.rank(2).startHandlerThreads();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> workers = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                Fabric fabric = job.rank(r);
                int rank = r;
                workers.add(Thread.ofPlatform().daemon().name("worker-" + rank + ".0").start(() -> {
                    try {
                        fabric.attach(0, null);
                        Random random = new Random(rank);
                        for (int round = 0; round < 20; round++) {
                            byte[] big = new byte[40_000];
                            random.nextBytes(big);
                            together.await(20, TimeUnit.SECONDS);
                            long sum = fabric.callReturn(new ThreadId(1 - rank, 0), () -> checksum(big)
                                    + (long) Fabric.current().callReturn(new ThreadId(2, 0), () -> 1L));
                            assertEquals(checksum(big) + 1, sum, "round " + round + " of rank " + rank);
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                        together.reset(); // the other worker stops at its next round instead of waiting
                    }
                }));
            }
            for (Thread worker : workers) {
                worker.join(60_000);
                assertTrue(!worker.isAlive(), worker.getName() + " still in its callReturn after 60 s");
            }
            assertNull(failure.get(), () -> "a worker failed: " + failure.get());
        }
    }

    /** In fresh JVMs: allocation depends on the JIT's profile, which the suite's other tests would shape. */
    @Test
    void aSteadyStateCallReturnAllocatesNothingOnTheCallingThread() {
        List<String> jvm = new ArrayList<>(LocalLauncher.inheritedJvmFlags());
        jvm.add("-Xmx256m");
        fixture().config().forEach((k, v) -> jvm.add("-D" + k + "=" + v));
        jvm.addAll(fixture().childJvmOptions());
        try (LocalLauncher job = LocalLauncher.builder(AllocationProbeMain.class).processes(2).threadsPerProcess(1)
                .jvmArgs(jvm.toArray(String[]::new)).start()) {
            String line = job.process(0).awaitLine(l -> l.startsWith("ALLOCATED"), Duration.ofSeconds(180));
            job.awaitAll(Duration.ofSeconds(60));
            String[] fields = line.split("[ =]");
            double plain = Double.parseDouble(fields[2]);
            double ordered = Double.parseDouble(fields[4]);
            assertTrue(plain <= 8 && ordered <= 8, "bytes allocated per callReturn: " + plain
                    + " without, " + ordered + " after one-way calls (bound 8)");
        }
    }
}
