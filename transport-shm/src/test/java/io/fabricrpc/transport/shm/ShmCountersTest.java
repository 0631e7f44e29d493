package io.fabricrpc.transport.shm;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.Synchronizer;
import io.fabricrpc.counters.CountersFileReader;
import io.fabricrpc.api.JobConfig;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.invocation.LocalJob;
import io.fabricrpc.api.SerializationRegistry;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The counters file of real fabrics over shared memory (two "processes" in this JVM), and the shm set-up JFR event. */
class ShmCountersTest {
    static final AtomicLong RUN = new AtomicLong();

    @TempDir
    Path temp;

    /** Two fabrics whose counters go to {@code dir}, published every 10 ms. */
    static List<Fabric> join(Path dir) {
        SerializationRegistry registry = SerializationRegistry.builder().allowCapturingClass(ShmCountersTest.class).build();
        int port = LocalJob.freePort();
        List<CompletableFuture<Fabric>> joining = new ArrayList<>();
        for (int rank = 0; rank < 2; rank++) {
            Map<String, String> transport = new HashMap<>(ShmFixture.INSTANCE.config());
            transport.put("fabric.counters.dir", dir.toString());
            transport.put("fabric.counters.periodMillis", "10");
            JobConfig job = JobConfig.builder().rank(rank).size(2).threadsPerProcess(1).coordinator("127.0.0.1", port)
                    .jobSecret(LocalJob.SECRET).joinTimeout(Duration.ofSeconds(30)).build();
            FabricConfig config = FabricConfig.of(job, registry).withTransport(transport);
            joining.add(CompletableFuture.supplyAsync(() -> Fabric.join(config)));
        }
        return joining.stream().map(f -> f.orTimeout(60, TimeUnit.SECONDS).join()).toList();
    }

    /** Every rank leaves at once: close is a barrier with the others. */
    static void closeAll(List<Fabric> fabrics) {
        fabrics.stream().map(f -> CompletableFuture.runAsync(f::close)).toList()
                .forEach(f -> f.orTimeout(60, TimeUnit.SECONDS).join());
    }

    static long counter(CountersFileReader.Snapshot s, String label) {
        return s.counters().stream().filter(c -> c.label().equals(label)).mapToLong(CountersFileReader.Counter::value)
                .findFirst().orElse(-1);
    }

    static CountersFileReader.Snapshot ofRank(Path dir, int rank) throws Exception {
        for (CountersFileReader.Result r : CountersFileReader.readDirectory(dir)) {
            if (r instanceof CountersFileReader.Snapshot s && s.rank() == rank) {
                return s;
            }
        }
        throw new AssertionError("no counters file of rank " + rank + " in " + dir + ": " + CountersFileReader.readDirectory(dir));
    }

    /** Makes {@code calls} CONSUMED calls from worker 0/0 to 1/0 and waits for them to run. */
    static void callAndWait(List<Fabric> fabrics, int calls) {
        fabrics.get(1).startHandlerThreads();
        Fabric sender = fabrics.get(0);
        sender.attach(0);
        Synchronizer consumed = new Synchronizer(Synchronizer.Mode.CONSUMED);
        for (int i = 0; i < calls; i++) {
            sender.call(new ThreadId(1, 0), () -> RUN.incrementAndGet(), consumed);
        }
        consumed.await(Duration.ofSeconds(30));
    }

    @Test
    void callsSentAndRunMatchTheCallsMadeOnceThePublisherRan() throws Exception {
        Path dir = temp.resolve("counters");
        List<Fabric> fabrics = join(dir);
        int calls = 5_000;
        try {
            callAndWait(fabrics, calls);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            CountersFileReader.Snapshot sender;
            CountersFileReader.Snapshot receiver;
            do {
                Thread.sleep(20);
                sender = ofRank(dir, 0);
                receiver = ofRank(dir, 1);
            } while ((counter(sender, "calls sent 0/0 -> 1/0") != calls || counter(receiver, "calls run 0/0 -> 1/0") != calls)
                    && System.nanoTime() < deadline);
            assertEquals(calls, counter(sender, "calls sent 0/0 -> 1/0"), sender.counters().toString());
            assertEquals(calls, counter(receiver, "calls run 0/0 -> 1/0"), receiver.counters().toString());
            assertTrue(counter(sender, "bytes sent 0/0 -> 1/0") >= calls * 8L, sender.counters().toString());
            assertTrue(counter(sender, "chunks held (c_max 16) 0/0 -> 1/0") >= 2, sender.counters().toString());
            assertTrue(counter(sender, "heartbeats sent rank 0") >= 0, sender.counters().toString());
            assertTrue(sender.alive() && sender.pid() == ProcessHandle.current().pid());
        } finally {
            closeAll(fabrics);
        }
        try (var files = Files.list(dir)) {
            assertFalse(files.findAny().isPresent(), "a clean close deletes the counters files");
        }
    }

    /** Both aggregation modes count their flushes (and batches) in the file. */
    @Test
    void aggregatingViewsCountTheirFlushes() throws Exception {
        Path dir = temp.resolve("aggregation");
        List<Fabric> fabrics = join(dir);
        try {
            fabrics.get(1).startHandlerThreads();
            Fabric sender = fabrics.get(0);
            sender.attach(0);
            for (Fabric view : List.of(io.fabricrpc.aggregation.Aggregation.traditional(sender,
                    io.fabricrpc.aggregation.AggregationConfig.traditional()), io.fabricrpc.aggregation.Aggregation
                    .overflow(sender, io.fabricrpc.aggregation.AggregationConfig.overflow()))) {
                Synchronizer consumed = new Synchronizer(Synchronizer.Mode.CONSUMED);
                for (int i = 0; i < 1_000; i++) {
                    view.call(new ThreadId(1, 0), () -> RUN.incrementAndGet(), consumed);
                }
                view.flush();
                consumed.await(Duration.ofSeconds(30));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            List<CountersFileReader.Counter> flushes;
            do {
                Thread.sleep(20);
                flushes = ofRank(dir, 0).counters().stream().filter(c -> c.label().startsWith("aggregation flushes")
                        && c.value() >= 1).toList();
            } while (flushes.size() < 2 && System.nanoTime() < deadline);
            assertEquals(2, flushes.size(), "a trad and an ovfl channel: " + ofRank(dir, 0).counters());
        } finally {
            closeAll(fabrics);
        }
    }

    @Test
    void countersCanBeTurnedOff() throws Exception {
        Path dir = temp.resolve("off");
        SerializationRegistry registry = SerializationRegistry.builder().build();
        Map<String, String> transport = new HashMap<>(ShmFixture.INSTANCE.config());
        transport.put("fabric.counters.dir", dir.toString());
        transport.put("fabric.counters", "false");
        JobConfig job = JobConfig.builder().rank(0).size(1).threadsPerProcess(1).coordinator("127.0.0.1", LocalJob.freePort())
                .jobSecret(LocalJob.SECRET).build();
        try (Fabric fabric = Fabric.join(FabricConfig.of(job, registry).withTransport(transport))) {
            assertFalse(Files.exists(dir));
        }
    }

    @Test
    void openingAnShmLinkIsAConnectionSetupEvent() throws Exception {
        Path jfr = temp.resolve("setup.jfr");
        try (Recording recording = new Recording()) {
            recording.enable("fabricrpc.ConnectionSetup");
            recording.start();
            List<Fabric> fabrics = join(temp.resolve("counters"));
            try {
                callAndWait(fabrics, 10);
            } finally {
                closeAll(fabrics);
            }
            recording.stop();
            recording.dump(jfr);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(jfr).stream()
                .filter(e -> e.getEventType().getName().equals("fabricrpc.ConnectionSetup")).toList();
        assertFalse(events.isEmpty(), "no fabricrpc.ConnectionSetup event");
        for (RecordedEvent e : events) {
            assertEquals("shm", e.getString("transport"));
            assertTrue(e.getString("peer").startsWith("shm endpoint "), e.toString());
            assertEquals("connected", e.getString("outcome"));
            assertFalse(e.getDuration().isNegative());
        }
    }
}
