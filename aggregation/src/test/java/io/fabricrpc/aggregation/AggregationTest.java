package io.fabricrpc.aggregation;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.RemoteContextConsumer;
import io.fabricrpc.api.Synchronizer;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.invocation.FabricTest.Inbox;
import io.fabricrpc.invocation.LocalJob;
import io.fabricrpc.api.MessengerConfig;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Aggregated invocation over a real transport; every transport module runs it with its own fixture. */
public abstract class AggregationTest {
    protected abstract TransportFixture fixture();

    /** Every worker sends to every worker through an aggregating view; checks exactly-once and per-sender FIFO. */
    private void stress(AggregationConfig aggregation, MessengerConfig messenger) throws Exception {
        int processes = 2;
        int threads = 2;
        int workers = processes * threads;
        long total = Long.getLong("fabricrpc.aggregation.stress.calls", 10_000_000L);
        long perPair = total / ((long) workers * workers);
        Object[][] contexts = LocalJob.inboxes(processes, threads);
        try (LocalJob job = new LocalJob(fixture(), processes, threads, messenger)) {
            Fabric[] views = {Aggregation.of(job.rank(0), aggregation), Aggregation.of(job.rank(1), aggregation)};
            long started = System.nanoTime();
            job.runWorkers(contexts, (fabric, index) -> {
                Fabric calls = views[fabric.rank()];
                int me = fabric.rank() * threads + index;
                Inbox inbox = Fabric.currentContext();
                for (long sequence = 0; sequence < perPair; sequence++) {
                    for (int dest = 0; dest < workers; dest++) {
                        long s = sequence;
                        assertTrue(calls.call(new ThreadId(dest / threads, dest % threads),
                                (RemoteContextConsumer<Inbox>) box -> box.record(me, s), null));
                    }
                    if ((sequence & 255) == 0) {
                        fabric.processCalls();
                    }
                }
                Aggregation.shutdown(calls); // flush, then the one-way signal to each destination
                Aggregation.awaitShutdownSignals(fabric, workers, Duration.ofMinutes(2));
                assertEquals(perPair * workers, inbox.received, "calls arrive before their sender's shutdown signal");
            });
            double seconds = (System.nanoTime() - started) / 1e9;
            System.out.printf("aggregation %s stress: %,d calls in %.1f s (%,.0f calls/s)%n", aggregation.mode(),
                    perPair * workers * workers, seconds, perPair * workers * workers / seconds);
            for (Object[] rank : contexts) {
                for (Object context : rank) {
                    assertNull(((Inbox) context).error);
                    assertEquals(perPair * workers, ((Inbox) context).received);
                }
            }
        }
    }

    @Test
    void traditionalIsExactlyOnceAndInOrderUnderStress() throws Exception {
        stress(AggregationConfig.traditional(), MessengerConfig.defaults());
    }

    @Test
    void overflowIsExactlyOnceAndInOrderUnderStress() throws Exception {
        // Small rings so that exceeding calls happen all along.
        stress(AggregationConfig.overflow(), MessengerConfig.defaults().withChunks(4096, 1, 2));
    }

    @Test
    void aSlowReceiverPushesOverflowIntoItsExceedingPathAndBack() throws Exception {
        Object[][] contexts = LocalJob.inboxes(2, 1);
        try (LocalJob job = new LocalJob(fixture(), 2, 1, MessengerConfig.defaults().withChunks(4096, 1, 2))) {
            Fabric calls = Aggregation.overflow(job.rank(0), AggregationConfig.overflow().withMaxDelay(Duration.ofSeconds(60)));
            ThreadId dest = new ThreadId(1, 0);
            long records = 20_000; // far more than two 4 KiB chunks hold
            for (long i = 0; i < records; i++) {
                long s = i;
                assertTrue(calls.call(dest, (RemoteContextConsumer<Inbox>) box -> box.record(0, s), null));
            }
            assertTrue(Aggregation.bufferedBytes(calls) > 0, "the receiver sleeps: calls must be waiting as exceeding");
            Inbox inbox = (Inbox) contexts[1][0];
            Thread receiver = Thread.ofPlatform().start(() -> {
                job.rank(1).attach(0, inbox);
                LocalJob.processUntil(job.rank(1), () -> inbox.received == records + 1, "every call");
            });
            // Calls made while exceeding calls wait queue behind them, and the flush moves them all.
            calls.call(dest, (RemoteContextConsumer<Inbox>) box -> box.record(0, records), null);
            calls.flush();
            receiver.join(120_000);
            assertFalse(receiver.isAlive());
            assertNull(inbox.error);
            assertEquals(records + 1, inbox.received);
            assertEquals(0, Aggregation.bufferedBytes(calls), "and back: nothing waits after the flush");
        }
    }

    @Test
    void theExceedingLimitFailsOrBlocksAsConfigured() throws Exception {
        MessengerConfig small = MessengerConfig.defaults().withChunks(4096, 1, 1);
        try (LocalJob job = new LocalJob(fixture(), 2, 1, small)) {
            Fabric failing = Aggregation.overflow(job.rank(0), AggregationConfig.overflow()
                    .withExceedingLimit(4096, AggregationConfig.LimitPolicy.FAIL).withMaxDelay(Duration.ofSeconds(60)));
            ThreadId dest = new ThreadId(1, 0);
            long accepted = 0;
            while (failing.call(dest, () -> { })) {
                accepted++;
                assertTrue(accepted < 100_000, "the limit never applied");
            }
            assertTrue(accepted > 100, "accepted " + accepted);
            Fabric blocking = Aggregation.overflow(job.rank(0), AggregationConfig.overflow()
                    .withExceedingLimit(4096, AggregationConfig.LimitPolicy.BLOCK).withMaxDelay(Duration.ofSeconds(60)));
            assertTrue(blocking.call(dest, () -> { })); // sets up the messenger (a wait of its own) before the looks
            AtomicBoolean released = new AtomicBoolean();
            Thread sender = Thread.currentThread();
            AtomicInteger samples = new AtomicInteger();
            AtomicInteger parked = new AtomicInteger();
            Thread receiver = Thread.ofPlatform().start(() -> {
                // While the receiver is away (300 ms), look at the blocked sender every millisecond.
                long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
                try {
                    while (System.nanoTime() < end) {
                        Thread.sleep(1);
                        samples.incrementAndGet();
                        if (sender.getState() == Thread.State.TIMED_WAITING) {
                            parked.incrementAndGet();
                        }
                    }
                } catch (InterruptedException e) {
                    return;
                }
                released.set(true);
                job.rank(1).startHandlerThreads();
            });
            for (int i = 0; i < 5_000; i++) {
                assertTrue(blocking.call(dest, () -> { }));
            }
            assertTrue(released.get(), "BLOCK waited for the receiver instead of failing");
            receiver.join();
            // The wait backs off into parks: a spinning sender is never seen parked, and takes a CPU the receiver
            // may need. (Not a CPU-time bound: under emulation each look at the receiver costs far more.)
            assertTrue(parked.get() > 0, "the blocked sender was never parked in " + samples.get() + " looks");
        }
    }

    @Test
    void anIdleSenderNeverLeavesCallsUnsentBeyondMaxDelay() throws Exception {
        Object[][] contexts = LocalJob.inboxes(2, 1);
        try (LocalJob job = new LocalJob(fixture(), 2, 1, MessengerConfig.defaults())) {
            Fabric calls = Aggregation.traditional(job.rank(0), AggregationConfig.traditional()
                    .withMaxDelay(Duration.ofMillis(5)));
            ThreadId dest = new ThreadId(1, 0);
            for (long i = 0; i < 3; i++) {
                long s = i;
                calls.call(dest, (RemoteContextConsumer<Inbox>) box -> box.record(0, s), null);
            }
            // No flush, no more calls: the flusher must push the partial batch out.
            Inbox inbox = (Inbox) contexts[1][0];
            long start = System.nanoTime();
            Thread receiver = Thread.ofPlatform().start(() -> {
                job.rank(1).attach(0, inbox);
                LocalJob.processUntil(job.rank(1), () -> inbox.received == 3, "the idle batch");
            });
            receiver.join(30_000);
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertEquals(3, inbox.received);
            System.out.println("idle batch arrived after " + millis + " ms (maxDelay 5 ms)");
        }
    }

    /**
     * The flusher parks without a timeout once nothing waits (an idle process stays idle), and calls left behind by a
     * sender that then goes idle still go out: the sender wakes it. Both modes: trad's partial batch, and ovfl's
     * exceeding calls (parked while the receiver pauses, drained by the flusher once it runs again).
     */
    @Test
    void theFlusherSleepsWhileNothingWaitsAndAnIdleSenderWakesIt() throws Exception {
        Object[][] contexts = LocalJob.inboxes(2, 1);
        try (LocalJob job = new LocalJob(fixture(), 2, 1, MessengerConfig.defaults().withChunks(4096, 2, 2))) {
            Fabric trad = Aggregation.traditional(job.rank(0), AggregationConfig.traditional()
                    .withMaxDelay(Duration.ofMillis(5)));
            Fabric ovfl = Aggregation.overflow(job.rank(0), AggregationConfig.overflow()
                    .withMaxDelay(Duration.ofMillis(5)));
            ThreadId dest = new ThreadId(1, 0);
            Inbox inbox = (Inbox) contexts[1][0];
            AtomicBoolean stop = new AtomicBoolean();
            AtomicBoolean paused = new AtomicBoolean();
            AtomicLong arrived = new AtomicLong();
            Thread receiver = Thread.ofPlatform().start(() -> {
                job.rank(1).attach(0, inbox);
                while (!stop.get()) {
                    if (paused.get() || job.rank(1).processCalls() == 0) {
                        Thread.onSpinWait();
                    }
                    arrived.set(inbox.received); // the test thread's view of the inbox
                }
            });
            try {
                long sent = 0;
                for (int round = 0; round < 3; round++) {
                    awaitFlusherAsleep(job.rank(0));
                    for (int i = 0; i < 3; i++, sent++) { // a partial batch, then nothing more
                        long s = sent;
                        assertTrue(trad.call(dest, (RemoteContextConsumer<Inbox>) box -> box.record(0, s), null));
                    }
                    awaitArrived(arrived, sent, "trad's partial batch of round " + round);
                    awaitFlusherAsleep(job.rank(0));
                    paused.set(true); // ovfl fills its two 4-KiB chunks; the rest waits as exceeding calls
                    for (int i = 0; i < 2_000; i++, sent++) {
                        long s = sent;
                        assertTrue(ovfl.call(dest, (RemoteContextConsumer<Inbox>) box -> box.record(0, s), null));
                    }
                    assertTrue(Aggregation.bufferedBytes(ovfl) > 0, "no call of round " + round + " exceeded");
                    paused.set(false);
                    awaitArrived(arrived, sent, "ovfl's exceeding calls of round " + round);
                }
                awaitFlusherAsleep(job.rank(0));
            } finally {
                stop.set(true);
                receiver.join();
            }
            assertNull(inbox.error, "exactly once and in order");
        }
    }

    /**
     * An idle fabric's agent costs next to nothing: after a burst of trad and ovfl calls, two seconds of idleness take
     * a few milliseconds of its CPU (it parks, looking ten times a second). A 200-us tick cost 5-6% of a core here;
     * the bound is far above a parked thread and far below a ticking one.
     */
    @Test
    void anIdleFabricsAgentSpendsNextToNoCpu() throws Exception {
        Object[][] contexts = LocalJob.inboxes(2, 1);
        try (LocalJob job = new LocalJob(fixture(), 2, 1, MessengerConfig.defaults())) {
            Fabric trad = Aggregation.traditional(job.rank(0), AggregationConfig.traditional());
            Fabric ovfl = Aggregation.overflow(job.rank(0), AggregationConfig.overflow());
            ThreadId dest = new ThreadId(1, 0);
            job.rank(1).startHandlerThreads();
            for (int i = 0; i < 1_000; i++) {
                assertTrue(trad.call(dest, () -> { }));
                assertTrue(ovfl.call(dest, () -> { }));
            }
            trad.flush();
            ovfl.flush();
            awaitFlusherAsleep(job.rank(0));
            Thread agent = io.fabricrpc.invocation.ChannelViews.of(job.rank(0)).agent().thread();
            java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
            long before = threads.getThreadCpuTime(agent.threadId());
            Thread.sleep(2_000);
            long spentMillis = (threads.getThreadCpuTime(agent.threadId()) - before) / 1_000_000;
            System.out.println("idle agent: " + spentMillis + " ms of CPU in 2 s");
            assertTrue(spentMillis < 40, "the idle agent spent " + spentMillis + " ms of CPU in 2 s: it polls");
        }
    }

    private static void awaitFlusherAsleep(Fabric fabric) throws InterruptedException {
        io.fabricrpc.messaging.SendingAgent agent = io.fabricrpc.invocation.ChannelViews.of(fabric).agent();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!(agent.isAsleep() && agent.thread().getState() != Thread.State.RUNNABLE)) {
            assertTrue(System.nanoTime() < deadline, "the agent still polls with nothing to push out: "
                    + agent.thread().getState());
            Thread.sleep(1);
        }
    }

    private static void awaitArrived(AtomicLong arrived, long calls, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (arrived.get() < calls) {
            assertTrue(System.nanoTime() < deadline, what + ": " + arrived.get() + " of " + calls
                    + " calls arrived in 30 s (was the flusher woken?)");
            Thread.sleep(1);
        }
        assertEquals(calls, arrived.get(), what);
    }

    /**
     * A word count's shape: every worker sends a partial batch to every worker (itself included) through a trad view
     * with a CONSUMED synchronizer, then awaits it without a flush. The await must depend neither on a flush nor on
     * the agent's push-out (maxDelay here outlasts the await's timeout).
     */
    @Test
    void aConsumedSynchronizerOnATraditionalViewCompletesWithoutAFlush() throws Exception {
        int processes = 3;
        Object[][] contexts = LocalJob.inboxes(processes, 1);
        try (LocalJob job = new LocalJob(fixture(), processes, 1, MessengerConfig.defaults())) {
            Fabric[] views = new Fabric[processes];
            for (int r = 0; r < processes; r++) {
                views[r] = Aggregation.traditional(job.rank(r), AggregationConfig.traditional()
                        .withMaxDelay(Duration.ofSeconds(60)));
            }
            job.runWorkers(contexts, (fabric, index) -> {
                Fabric calls = views[fabric.rank()];
                int me = fabric.rank();
                for (int round = 0; round < 20; round++) {
                    Synchronizer sync = new Synchronizer(Synchronizer.Mode.CONSUMED);
                    for (int dest = 0; dest < processes; dest++) {
                        for (long i = 0; i < 5; i++) {
                            long s = round * 5L + i;
                            assertTrue(calls.call(new ThreadId(dest, 0),
                                    (RemoteContextConsumer<Inbox>) box -> box.record(me, s), sync));
                        }
                    }
                    sync.await(Duration.ofSeconds(10)); // runs this worker's own calls meanwhile
                }
                Inbox inbox = Fabric.currentContext();
                LocalJob.processUntil(fabric, () -> inbox.received == 100L * processes, "every call");
            });
            for (Object[] rank : contexts) {
                assertNull(((Inbox) rank[0]).error);
                assertEquals(100L * processes, ((Inbox) rank[0]).received);
            }
        }
    }

    /**
     * The same shape without a synchronizer: each worker makes a partial batch for every worker, itself included, and
     * then only runs calls. Every batch must go out by time alone, round after round.
     */
    @Test
    void partialBatchesOfWorkersThatOnlyRunCallsGoOutByTimeAlone() throws Exception {
        int processes = 3;
        Object[][] contexts = LocalJob.inboxes(processes, 1);
        try (LocalJob job = new LocalJob(fixture(), processes, 1, MessengerConfig.defaults())) {
            Fabric[] views = new Fabric[processes];
            for (int r = 0; r < processes; r++) {
                views[r] = Aggregation.traditional(job.rank(r), AggregationConfig.traditional());
            }
            job.runWorkers(contexts, (fabric, index) -> {
                Fabric calls = views[fabric.rank()];
                int me = fabric.rank();
                Inbox inbox = Fabric.currentContext();
                for (int round = 0; round < 20; round++) {
                    for (int dest = 0; dest < processes; dest++) {
                        for (long i = 0; i < 5; i++) {
                            long s = round * 5L + i;
                            assertTrue(calls.call(new ThreadId(dest, 0),
                                    (RemoteContextConsumer<Inbox>) box -> box.record(me, s), null));
                        }
                    }
                    long expected = (round + 1) * 5L * processes; // others may be a round ahead already
                    LocalJob.processUntil(fabric, () -> inbox.received >= expected, "round " + round);
                }
            });
            for (Object[] rank : contexts) {
                assertNull(((Inbox) rank[0]).error);
            }
        }
    }

    /** A SENT synchronizer counts a batched call down only once the call has left the view. */
    @Test
    void aSentSynchronizerOnATraditionalViewReturnsOnlyOnceTheCallsAreSent() throws Exception {
        Object[][] contexts = LocalJob.inboxes(2, 1);
        try (LocalJob job = new LocalJob(fixture(), 2, 1, MessengerConfig.defaults())) {
            Fabric calls = Aggregation.traditional(job.rank(0), AggregationConfig.traditional()
                    .withMaxDelay(Duration.ofSeconds(60)));
            ThreadId dest = new ThreadId(1, 0);
            job.rank(0).attach(0, contexts[0][0]);
            for (int round = 0; round < 50; round++) {
                Synchronizer sync = new Synchronizer(Synchronizer.Mode.SENT);
                for (long i = 0; i < 3; i++) {
                    long s = round * 3L + i;
                    assertTrue(calls.call(dest, (RemoteContextConsumer<Inbox>) box -> box.record(0, s), sync));
                }
                sync.await(Duration.ofSeconds(20));
                assertEquals(0, Aggregation.bufferedBytes(calls), "round " + round + ": SENT returned before the calls left");
            }
            Inbox inbox = (Inbox) contexts[1][0];
            Thread receiver = Thread.ofPlatform().start(() -> {
                job.rank(1).attach(0, inbox);
                LocalJob.processUntil(job.rank(1), () -> inbox.received == 150, "every call");
            });
            receiver.join(60_000);
            assertEquals(150, inbox.received);
            assertNull(inbox.error);
        }
    }

    /** A synchronizer that times out names the destination worker the way the application addresses it. */
    @Test
    void aSynchronizerTimeoutNamesTheDestinationWorker() throws Exception {
        try (LocalJob job = new LocalJob(fixture(), 2, 2, MessengerConfig.defaults())) {
            Fabric calls = Aggregation.traditional(job.rank(0), AggregationConfig.traditional());
            job.rank(0).attach(0);
            Synchronizer sync = new Synchronizer(Synchronizer.Mode.CONSUMED);
            assertTrue(calls.call(new ThreadId(1, 1), () -> { }, sync)); // nobody runs worker (1, 1)'s calls
            Synchronizer.SynchronizerTimeoutException e = org.junit.jupiter.api.Assertions.assertThrows(
                    Synchronizer.SynchronizerTimeoutException.class, () -> sync.await(Duration.ofMillis(300)));
            assertTrue(e.getMessage().contains("worker 1/1 (rank 1, thread 1)"), e.getMessage());
            assertFalse(e.getMessage().contains("Messenger["), e.getMessage());
        }
    }

    @Test
    void shutdownFlushesPendingCallsBeforeItsSignal() throws Exception {
        Object[][] contexts = LocalJob.inboxes(2, 1);
        try (LocalJob job = new LocalJob(fixture(), 2, 1, MessengerConfig.defaults())) {
            Fabric calls = Aggregation.traditional(job.rank(0), AggregationConfig.traditional()
                    .withMaxDelay(Duration.ofSeconds(60)).withBatchBytes(1 << 20));
            ThreadId dest = new ThreadId(1, 0);
            for (long i = 0; i < 1000; i++) {
                long s = i;
                calls.call(dest, (RemoteContextConsumer<Inbox>) box -> box.record(0, s), null);
            }
            Aggregation.shutdown(calls);
            Inbox inbox = (Inbox) contexts[1][0];
            Thread receiver = Thread.ofPlatform().start(() -> {
                job.rank(1).attach(0, inbox);
                Aggregation.awaitShutdownSignals(job.rank(1), 1, Duration.ofSeconds(60));
            });
            receiver.join(60_000);
            assertFalse(receiver.isAlive());
            assertEquals(1000, inbox.received, "every pending call ran before the signal arrived");
            assertNull(inbox.error);
        }
    }
}
