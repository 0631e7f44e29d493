package io.fabricrpc.transport.rdma.firehose;

import io.fabricrpc.transport.Link;
import io.fabricrpc.transport.LinkStatistics;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.transport.Transports;
import io.fabricrpc.transport.rdma.RdmaTestSupport;
import io.fabricrpc.transport.rdma.spi.RdmaTransport;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The transport's JFR events: an RDMA connect (fabricrpc.ConnectionSetup) and a Firehose registration miss
 * (fabricrpc.RegistrationMiss) on real verbs in the guest, plus the link's counts for the counters file; and the miss
 * event alone on the host, over a registrar without a device.
 */
class RdmaJfrEventsTest {
    private static final int BUCKET = 64 * 1024;

    @TempDir
    Path temp;

    private static List<RecordedEvent> events(Path file, String name) throws Exception {
        return RecordingFile.readAllEvents(file).stream().filter(e -> e.getEventType().getName().equals(name)).toList();
    }

    @Test
    void aMissIsARegistrationMissEventAndAHitIsNot() throws Exception {
        Path jfr = temp.resolve("miss.jfr");
        Registrar<Long> fake = new Registrar<>() {
            @Override
            public Long register(long address, long length) {
                return address;
            }

            @Override
            public void deregister(Long registration) {
            }
        };
        try (Recording recording = new Recording(); Arena arena = Arena.ofConfined()) {
            recording.enable("fabricrpc.RegistrationMiss");
            recording.start();
            MemorySegment user = arena.allocate(4L * BUCKET, BUCKET);
            try (FirehoseCache<Long> cache = new FirehoseCache<>(FirehoseCache.Config.of(8L * BUCKET, 4L * BUCKET), fake)) {
                cache.release(cache.pin(user.asSlice(BUCKET - 10, 20))); // buckets 0 and 1: one miss
                cache.release(cache.pin(user.asSlice(BUCKET - 10, 20))); // victims come back: no event
            }
            recording.stop();
            recording.dump(jfr);
        }
        List<RecordedEvent> misses = events(jfr, "fabricrpc.RegistrationMiss");
        assertEquals(1, misses.size(), misses.toString());
        assertEquals(2L * BUCKET, misses.get(0).getLong("bytes"));
        assertEquals(2, misses.get(0).getInt("buckets"));
        assertFalse(misses.get(0).getBoolean("failed"));
    }

    @Test
    @EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
    void anRdmaConnectAndARegistrationMissAreEventsAndTheLinkCounts() throws Exception {
        Path jfr = temp.resolve("rdma.jfr");
        Map<String, String> config = Map.of("fabric.transport", "rdma", "rdma.bindAddress",
                RdmaTestSupport.rdmaAddress().getHostAddress());
        try (Recording recording = new Recording(); Arena arena = Arena.ofShared()) {
            recording.enable("fabricrpc.ConnectionSetup");
            recording.enable("fabricrpc.RegistrationMiss");
            recording.start();
            try (RdmaTransport a = (RdmaTransport) Transports.open(config);
                 RdmaTransport b = (RdmaTransport) Transports.open(config)) {
                Link link = a.connect(b.address());
                MemorySegment user = arena.allocate(2L * BUCKET, BUCKET);
                FirehoseCache.Config cacheConfig = new FirehoseCache.Config(BUCKET, 2L * BUCKET, BUCKET,
                        TimeUnit.SECONDS.toNanos(5));
                try (FirehoseCache<LocalRegion> cache = new FirehoseCache<>(cacheConfig,
                        RdmaFirehose.registrar(a, RemoteAccess.NONE));
                     LocalRegion target = b.allocate(BUCKET, RemoteAccess.WRITE)) {
                    FirehoseHandle<LocalRegion> h = cache.pin(user.asSlice(0, 4096));
                    link.awaitCompletion(RdmaFirehose.write(link, h, 0, target.remote(), 0, 4096));
                    cache.release(h);
                }
                LinkStatistics stats = link.statistics();
                assertTrue(stats.loWritesPosted() >= 1, "writes posted " + stats.loWritesPosted());
                assertTrue(stats.loSignaledCompletions() >= 1, "signaled completions " + stats.loSignaledCompletions());
                assertEquals(0, stats.loCompletionErrors());
            }
            recording.stop();
            recording.dump(jfr);
        }
        List<RecordedEvent> setups = events(jfr, "fabricrpc.ConnectionSetup");
        assertTrue(setups.stream().anyMatch(e -> e.getString("transport").equals("rdma")
                && e.getString("outcome").equals("connected") && e.getString("peer").startsWith("rdma endpoint ")
                && !e.getDuration().isNegative()), setups.toString());
        List<RecordedEvent> misses = events(jfr, "fabricrpc.RegistrationMiss");
        assertEquals(1, misses.size(), misses.toString());
        assertEquals(BUCKET, misses.get(0).getLong("bytes"));
    }
}
