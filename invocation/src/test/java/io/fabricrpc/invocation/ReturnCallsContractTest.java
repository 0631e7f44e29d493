package io.fabricrpc.invocation;

import io.fabricrpc.api.DeadlineExceededException;
import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.MessengerConfig;
import io.fabricrpc.api.Synchronizer;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The contract of calls with a result, run by every transport: each call ends exactly once, within its deadline,
 * whatever the caller waits with (the future's own wait, {@code allOf}, {@code anyOf}, {@code thenCombine},
 * {@code thenCompose}, {@code awaitAll}); a late reply never reaches a later call; workers that fan out to each other
 * never hang; a blocked worker is named. Every wait here is bounded.
 */
public abstract class ReturnCallsContractTest {
    protected abstract TransportFixture fixture();

    /** Slack for a loaded 2-core machine (or an emulated guest) on top of a deadline. */
    private static final long SLACK_MILLIS = 8_000;

    private TransportFixture with(Map<String, String> keys) {
        return fixture().with(keys);
    }


    /** Where a call ran, as rank * 10 + worker index. */
    static long whereAmI() {
        ThreadId self = Fabric.current().self();
        return self.rank() * 10L + self.threadIndex();
    }

    static long code(ThreadId id) {
        return id.rank() * 10L + id.threadIndex();
    }

    static List<ThreadId> everyWorker(Fabric fabric) {
        List<ThreadId> all = new ArrayList<>();
        for (int r = 0; r < fabric.size(); r++) {
            for (int i = 0; i < fabric.threadsPerProcess(); i++) {
                all.add(new ThreadId(r, i));
            }
        }
        return all;
    }

    @Test
    void allOfAnyOfThenCombineAndThenComposeOnAPlainThreadComplete() throws Exception {
        try (LocalJob job = new LocalJob(fixture(), 3, 2, MessengerConfig.defaults())) {
            for (Fabric fabric : job.fabrics) {
                fabric.startHandlerThreads();
            }
            Fabric fabric = job.rank(0);
            List<ThreadId> all = everyWorker(fabric);
            List<CompletableFuture<Long>> futures = new ArrayList<>();
            for (ThreadId dest : all) {
                futures.add(fabric.callReturnAsync(dest, ReturnCallsContractTest::whereAmI));
            }
            // allOf makes a plain future: nobody but the agent collects the replies while this thread parks in it.
            CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(20, TimeUnit.SECONDS);
            for (int i = 0; i < all.size(); i++) {
                assertEquals(code(all.get(i)), futures.get(i).join(), "call to " + all.get(i));
            }
            CompletableFuture<Long> a = fabric.callReturnAsync(all.get(2), ReturnCallsContractTest::whereAmI);
            CompletableFuture<Long> b = fabric.callReturnAsync(all.get(5), ReturnCallsContractTest::whereAmI);
            Object any = CompletableFuture.anyOf(a, b).get(20, TimeUnit.SECONDS);
            assertTrue(any.equals(10L) || any.equals(21L), "anyOf gave " + any);
            assertEquals(31L, a.thenCombine(b, Long::sum).get(20, TimeUnit.SECONDS));
            long composed = fabric.callReturnAsync(all.get(3), ReturnCallsContractTest::whereAmI)
                    .thenCompose(v -> fabric.callReturnAsync(all.get(4), () -> v * 100 + whereAmI()))
                    .thenApply(v -> v + 1)
                    .get(20, TimeUnit.SECONDS);
            assertEquals(11L * 100 + 20 + 1, composed);
            CompletableFuture<Long> joined = fabric.callReturnAsync(all.get(1), ReturnCallsContractTest::whereAmI);
            assertEquals(1L, CompletableFuture.allOf(joined).thenApply(v -> joined.join()).join());
        }
    }

    static final ConcurrentHashMap<Long, AtomicLong> VISITS = new ConcurrentHashMap<>();

    static long visit(int level, long from) {
        long key = level * 1_000L + whereAmI();
        VISITS.computeIfAbsent(key, k -> new AtomicLong()).incrementAndGet();
        return from;
    }

    @Test
    void workersThatFanOutToEveryWorkerLevelByLevelWithAwaitAllNeverHang() throws Exception {
        VISITS.clear();
        int levels = 4;
        try (LocalJob job = new LocalJob(fixture(), 3, 2, MessengerConfig.defaults())) {
            long started = System.nanoTime();
            job.runWorkers(null, (fabric, index) -> {
                long me = code(fabric.self());
                List<ThreadId> all = everyWorker(fabric);
                for (int level = 0; level < levels; level++) {
                    int l = level;
                    List<CompletableFuture<Long>> futures = new ArrayList<>();
                    for (ThreadId dest : all) {
                        futures.add(fabric.callReturnAsync(dest, () -> visit(l, me)));
                    }
                    // A chain too: the second hop is sent when the first's result is collected, by whichever thread.
                    ThreadId next = all.get((int) ((me + level) % all.size()));
                    futures.add(futures.get(0).thenCompose(v -> fabric.callReturnAsync(next, () -> v + 1)));
                    fabric.awaitAll(Duration.ofSeconds(60), futures);
                    for (int i = 0; i < all.size(); i++) {
                        assertEquals(me, futures.get(i).join(), "level " + level + " call to " + all.get(i));
                    }
                    assertEquals(me + 1, futures.get(all.size()).join());
                }
                fabric.barrier(); // serves the others' calls until every worker is done
            });
            for (int level = 0; level < levels; level++) {
                for (ThreadId worker : everyWorker(job.rank(0))) {
                    AtomicLong visits = VISITS.get(level * 1_000L + code(worker));
                    assertTrue(visits != null && visits.get() >= 6, "level " + level + " worker " + worker
                            + " visited " + visits + " times, by each of the 6 workers at least once");
                }
            }
            long millis = (System.nanoTime() - started) / 1_000_000;
            assertTrue(millis < 120_000, "took " + millis + " ms");
        }
    }

    /** Captures the blocked-worker warnings of this JVM. */
    static final class Warnings extends Handler implements AutoCloseable {
        final ConcurrentLinkedQueue<String> messages = new ConcurrentLinkedQueue<>();
        private final Logger logger = Logger.getLogger("fabricrpc.workers");

        Warnings() {
            logger.addHandler(this);
        }

        @Override
        public void publish(LogRecord record) {
            messages.add(record.getMessage());
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
            logger.removeHandler(this);
        }
    }

    @Test
    void workersBlockedInAllOfAreNamedAndTheirCallsEndAtTheirDeadlines() throws Exception {
        long deadline = 3_000;
        try (Warnings warnings = new Warnings();
             LocalJob job = new LocalJob(fixture(), 2, 1, MessengerConfig.defaults())) {
            ConcurrentLinkedQueue<Throwable> outcomes = new ConcurrentLinkedQueue<>();
            AtomicLong slowest = new AtomicLong();
            job.runWorkers(null, (fabric, index) -> {
                ThreadId other = new ThreadId(1 - fabric.rank(), 0);
                long started = System.nanoTime();
                CompletableFuture<Long> call = fabric.callReturnAsync(other, Duration.ofMillis(deadline),
                        ReturnCallsContractTest::whereAmI);
                // The usual idiom, which blocks this worker: the peer, blocked the same way, never answers.
                CompletionException ended = assertThrows(CompletionException.class,
                        () -> CompletableFuture.allOf(call).join());
                slowest.accumulateAndGet((System.nanoTime() - started) / 1_000_000, Math::max);
                outcomes.add(ended.getCause());
                fabric.barrier(); // now both serve: the late calls run and their replies are dropped
            });
            assertEquals(2, outcomes.size());
            for (Throwable outcome : outcomes) {
                DeadlineExceededException late = assertInstanceOf(DeadlineExceededException.class, outcome);
                assertTrue(late.mayHaveRun(), late.getMessage());
            }
            assertTrue(slowest.get() < deadline + SLACK_MILLIS, "a call ended after " + slowest.get() + " ms");
            String all = String.join("\n---\n", warnings.messages);
            assertTrue(all.contains("worker 0/0") || all.contains("worker 1/0"), "no blocked worker named:\n" + all);
            assertTrue(all.contains("callReturn request") && all.contains("CompletableFuture"), all);
        }
    }

    static final AtomicInteger LATE_RUNS = new AtomicInteger();

    static long lateValue(long value) {
        LATE_RUNS.incrementAndGet();
        return value;
    }

    @Test
    void deadlinesAndCancelsEndCallsNobodyAnswersAndTheirLateRepliesReachNoLaterCall() throws Exception {
        LATE_RUNS.set(0);
        // The fewest ports: a window of that many calls below must reuse the ports the abandoned calls left.
        int ports = 64;
        try (LocalJob job = new LocalJob(with(Map.of("fabric.mailbox.ports", Integer.toString(ports))), 2, 1,
                MessengerConfig.defaults())) {
            CountDownLatch serve = new CountDownLatch(1);
            Fabric server = job.rank(1);
            AtomicReference<Throwable> serverFailure = new AtomicReference<>();
            AtomicInteger stop = new AtomicInteger();
            Thread worker = Thread.ofPlatform().name("silent-worker-1.0").start(() -> {
                try {
                    server.attach(0);
                    serve.await(); // attached but not polling: nothing answers the calls until released
                    while (stop.get() == 0) {
                        server.processCalls();
                        Thread.onSpinWait();
                    }
                } catch (Throwable t) {
                    serverFailure.set(t);
                }
            });
            Fabric fabric = job.rank(0);
            ThreadId dest = new ThreadId(1, 0);
            try {
                long started = System.nanoTime();
                CompletableFuture<Long> expiring = fabric.callReturnAsync(dest, Duration.ofMillis(300),
                        () -> lateValue(-1));
                ExecutionException expired = assertThrows(ExecutionException.class,
                        () -> CompletableFuture.allOf(expiring).get(30, TimeUnit.SECONDS));
                assertTrue(assertInstanceOf(DeadlineExceededException.class, expired.getCause()).mayHaveRun());
                long millis = (System.nanoTime() - started) / 1_000_000;
                assertTrue(millis < 300 + SLACK_MILLIS, "the deadline ended the call after " + millis + " ms");

                DeadlineExceededException blocking = assertThrows(DeadlineExceededException.class,
                        () -> fabric.callReturn(dest, Duration.ofMillis(200), () -> lateValue(-2)));
                assertTrue(blocking.mayHaveRun(), blocking.getMessage());

                CompletableFuture<Long> cancelled = fabric.callReturnAsync(dest, () -> lateValue(-3));
                assertTrue(cancelled.cancel(false));
                assertTrue(cancelled.isCancelled());
                assertThrows(CancellationException.class, cancelled::join);
                assertTrue(cancelled.cancel(true), "cancelling again reports the cancelled state");
                assertFalse(cancelled.complete(7L), "an ended call does not end again");

                serve.countDown();
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (LATE_RUNS.get() < 3 && System.nanoTime() < until) {
                    Thread.sleep(1); // the worker runs the abandoned calls: their replies wait on their ports
                }
                assertEquals(3, LATE_RUNS.get(), "each abandoned call ran once, late");
                // A window of one call per port takes every port, those with a late reply among them.
                List<CompletableFuture<Long>> window = new ArrayList<>();
                for (long i = 0; i < ports; i++) {
                    long expected = 500 + i;
                    window.add(fabric.callReturnAsync(dest, () -> expected));
                }
                fabric.awaitAll(Duration.ofSeconds(30), window);
                for (int i = 0; i < ports; i++) {
                    assertEquals(500L + i, window.get(i).join(), "call " + i + " of the window got another's result");
                }
                for (long i = 0; i < 40; i++) {
                    long expected = 1_000 + i;
                    long got = i % 2 == 0 ? fabric.callReturn(dest, () -> expected)
                            : fabric.callReturnAsync(dest, () -> expected).get(30, TimeUnit.SECONDS);
                    assertEquals(expected, got, "call " + i + " got another call's result");
                }
                assertInstanceOf(DeadlineExceededException.class, expiring.exceptionNow(), "still its one outcome");
                assertEquals(3, LATE_RUNS.get(), "an abandoned call ran again");
            } finally {
                serve.countDown();
                stop.set(1);
                worker.join(10_000);
            }
            assertNull(serverFailure.get());
        }
    }

    static final ConcurrentHashMap<Integer, AtomicInteger> RUNS = new ConcurrentHashMap<>();
    static final java.util.Set<Integer> NOT_SENT = ConcurrentHashMap.newKeySet();

    static long runOnce(int key, int micros) {
        RUNS.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
        long until = System.nanoTime() + micros * 1_000L;
        while (System.nanoTime() < until) {
            Thread.onSpinWait();
        }
        return key;
    }

    @Test
    void everyCallEndsExactlyOnceUnderDeadlinesCancelsAndSlowWorkers() throws Exception {
        RUNS.clear();
        NOT_SENT.clear();
        int callers = 3;
        int perCaller = 300;
        Map<Integer, AtomicInteger> endings = new ConcurrentHashMap<>();
        Map<Integer, CompletableFuture<Long>> futures = new ConcurrentHashMap<>();
        try (LocalJob job = new LocalJob(fixture(), 3, 2, MessengerConfig.defaults())) {
            for (Fabric fabric : job.fabrics) {
                fabric.startHandlerThreads();
            }
            Fabric fabric = job.rank(0);
            List<ThreadId> all = everyWorker(fabric);
            List<Thread> threads = new ArrayList<>();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            for (int c = 0; c < callers; c++) {
                int caller = c;
                threads.add(Thread.ofPlatform().name("caller-" + c).start(() -> {
                    Random random = new Random(caller);
                    try {
                        for (int s = 0; s < perCaller; s++) {
                            int key = caller * perCaller + s;
                            int micros = random.nextInt(3_000);
                            ThreadId dest = all.get(random.nextInt(all.size()));
                            endings.put(key, new AtomicInteger());
                            CompletableFuture<Long> future;
                            try {
                                future = fabric.callReturnAsync(dest, Duration.ofMillis(1 + random.nextInt(20)),
                                        () -> runOnce(key, micros));
                            } catch (DeadlineExceededException notSent) {
                                // Thrown by the call itself: it ended here, unsent, and must never run.
                                assertFalse(notSent.mayHaveRun(), notSent.getMessage());
                                endings.get(key).incrementAndGet();
                                futures.put(key, CompletableFuture.failedFuture(notSent));
                                NOT_SENT.add(key);
                                continue;
                            }
                            futures.put(key, future);
                            future.whenComplete((v, e) -> endings.get(key).incrementAndGet());
                            if (random.nextInt(5) == 0) {
                                future.cancel(false);
                            }
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                }));
            }
            for (Thread thread : threads) {
                thread.join(120_000);
                assertFalse(thread.isAlive(), thread.getName() + " still calling after 120 s");
            }
            assertNull(failure.get(), () -> "a caller failed: " + failure.get());
            try {
                fabric.awaitAll(Duration.ofSeconds(60), futures.values());
            } catch (CompletionException expected) {
                // deadlines and cancels: the outcomes are checked one by one below
            }
            Thread.sleep(200); // completions run after the claim; let the last callbacks count
            int values = 0;
            for (int key = 0; key < callers * perCaller; key++) {
                CompletableFuture<Long> future = futures.get(key);
                assertTrue(future.isDone(), "call " + key + " never ended");
                assertEquals(1, endings.get(key).get(), "call " + key + " ended " + endings.get(key) + " times");
                int runs = RUNS.getOrDefault(key, new AtomicInteger()).get();
                assertTrue(runs <= 1, "call " + key + " ran " + runs + " times");
                if (future.state() == java.util.concurrent.Future.State.SUCCESS) {
                    values++;
                    assertEquals(key, future.resultNow());
                    assertEquals(1, runs, "call " + key + " has its value, so it ran once");
                } else if (future.state() == java.util.concurrent.Future.State.FAILED) {
                    Throwable failed = future.exceptionNow();
                    assertInstanceOf(DeadlineExceededException.class, failed, () -> "call " + failed);
                }
            }
            assertTrue(values > 0, "no call beat its deadline at all");
            for (int key : NOT_SENT) {
                assertEquals(0, RUNS.getOrDefault(key, new AtomicInteger()).get(), "unsent call " + key + " ran");
            }
            // The ports are usable again: every worker still answers.
            for (ThreadId dest : all) {
                assertEquals(code(dest), fabric.callReturn(dest, ReturnCallsContractTest::whereAmI));
            }
        }
    }

    static void throwAt(int rank, int index) {
        ThreadId self = Fabric.current().self();
        if (self.rank() == rank && self.threadIndex() == index) {
            throw new IllegalStateException("broadcast refused at " + rank + "/" + index);
        }
    }

    @Test
    void aBroadcastThatThrowsAtOneWorkerFailsTheBroadcastersConsumedWaitOnce() throws Exception {
        try (LocalJob job = new LocalJob(fixture(), 2, 2, MessengerConfig.defaults())) {
            ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
            job.rank(1).onError((thread, error) -> errors.add(thread + ": " + error.getMessage()));
            Fabric fabric = job.rank(0);
            fabric.attach(0);
            for (Fabric each : job.fabrics) {
                each.startHandlerThreads();
            }
            Synchronizer consumed = new Synchronizer(Synchronizer.Mode.CONSUMED);
            fabric.broadcast(() -> throwAt(1, 1), consumed);
            Synchronizer.RemoteCallsFailedException failed = assertThrows(
                    Synchronizer.RemoteCallsFailedException.class, () -> consumed.await(Duration.ofSeconds(30)));
            assertTrue(failed.getMessage().contains("[1/1]"), failed.getMessage());
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (errors.isEmpty() && System.nanoTime() < until) {
                fabric.processCalls();
            }
            assertTrue(errors.stream().anyMatch(e -> e.contains("broadcast refused at 1/1")), errors.toString());
            fabric.broadcast(() -> throwAt(-1, -1), consumed);
            consumed.await(Duration.ofSeconds(30)); // reported once: the next broadcast's wait succeeds
            // At the broadcasting worker itself the lambda runs inside broadcast(), which throws it.
            assertThrows(IllegalStateException.class, () -> fabric.broadcast(() -> throwAt(0, 0), consumed));
        }
    }
}
