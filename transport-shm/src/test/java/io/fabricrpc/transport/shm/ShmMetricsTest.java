package io.fabricrpc.transport.shm;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.JobConfig;
import io.fabricrpc.api.SerializationRegistry;
import io.fabricrpc.counters.CountersJmx;
import io.fabricrpc.counters.ProcessCounters;
import io.fabricrpc.invocation.FabricRuntime;
import io.fabricrpc.invocation.LocalJob;
import io.fabricrpc.metrics.FabricMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The counters as JMX MBeans and Micrometer meters, for two fabrics over shared memory in this JVM. */
class ShmMetricsTest {
    private static final MBeanServer SERVER = ManagementFactory.getPlatformMBeanServer();

    @TempDir
    Path temp;

    private static ObjectName name(Fabric fabric) throws Exception {
        ProcessCounters counters = ((FabricRuntime) fabric).processCounters();
        assertNotNull(counters, "counters are on by default");
        return CountersJmx.objectName(counters);
    }

    /** Waits (bounded) until {@code value} reads {@code expected}, then returns what it read last. */
    private static long awaitValue(LongSupplier value, long expected) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        long seen = value.getAsLong();
        while (seen != expected && System.nanoTime() < deadline) {
            Thread.sleep(20);
            seen = value.getAsLong();
        }
        return seen;
    }

    private static long attribute(ObjectName name, String attribute) {
        try {
            return (Long) SERVER.getAttribute(name, attribute);
        } catch (Exception e) {
            throw new AssertionError(name + " " + attribute, e);
        }
    }

    @Test
    void theMBeanOfEachRankCountsTheCallsAndIsGoneAfterClose() throws Exception {
        List<Fabric> fabrics = ShmCountersTest.join(temp.resolve("counters"));
        int calls = 3_000;
        ObjectName sender = name(fabrics.get(0));
        ObjectName receiver = name(fabrics.get(1));
        try {
            assertEquals("Counters", sender.getKeyProperty("type"));
            assertEquals("0", sender.getKeyProperty("rank"));
            assertTrue(SERVER.isRegistered(sender) && SERVER.isRegistered(receiver));
            assertEquals(1, SERVER.queryNames(new ObjectName("io.fabricrpc:type=Counters,rank=1,*"), null).stream()
                    .filter(receiver::equals).count());
            ShmCountersTest.callAndWait(fabrics, calls);
            assertEquals(calls, awaitValue(() -> attribute(sender, "CallsSent"), calls));
            assertEquals(calls, awaitValue(() -> attribute(receiver, "CallsRun"), calls));
            assertTrue(attribute(sender, "BytesSent") >= calls * 8L);
            assertTrue(attribute(sender, "ChunksHeld") >= 2);
            assertEquals(0, attribute(receiver, "CallsSent"));
            assertEquals(0, (Integer) SERVER.getAttribute(sender, "Rank"));
        } finally {
            ShmCountersTest.closeAll(fabrics);
        }
        assertFalse(SERVER.isRegistered(sender), "close unregisters the MBean");
        assertFalse(SERVER.isRegistered(receiver), "close unregisters the MBean");
    }

    @Test
    void jmxCanBeTurnedOffWhileCountersStayOn() throws Exception {
        Map<String, String> transport = new HashMap<>(ShmFixture.INSTANCE.config());
        transport.put("fabric.counters.dir", temp.resolve("nojmx").toString());
        transport.put("fabric.jmx", "false");
        JobConfig job = JobConfig.builder().rank(0).size(1).threadsPerProcess(1).coordinator("127.0.0.1",
                LocalJob.freePort()).jobSecret(LocalJob.SECRET).build();
        try (Fabric fabric = Fabric.join(FabricConfig.of(job, SerializationRegistry.builder().build())
                .withTransport(transport))) {
            assertFalse(SERVER.isRegistered(name(fabric)));
        }
    }

    @Test
    void theMeterBinderExposesTheSameCounts() throws Exception {
        List<Fabric> fabrics = ShmCountersTest.join(temp.resolve("micrometer"));
        int calls = 2_000;
        try {
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            FabricMetrics.of(fabrics.get(0)).bindTo(registry);
            FabricMetrics.of(fabrics.get(1)).bindTo(registry);
            ShmCountersTest.callAndWait(fabrics, calls);
            var sent = registry.get("fabricrpc.calls.sent").tag("rank", "0").functionCounter();
            var run = registry.get("fabricrpc.calls.run").tag("rank", "1").functionCounter();
            assertEquals(calls, awaitValue(() -> (long) sent.count(), calls));
            assertEquals(calls, awaitValue(() -> (long) run.count(), calls));
            ObjectName jmx = name(fabrics.get(0));
            var bytes = registry.get("fabricrpc.bytes.sent").tag("rank", "0").functionCounter();
            long viaJmx = attribute(jmx, "BytesSent");
            assertEquals(viaJmx, awaitValue(() -> (long) bytes.count(), viaJmx), "the same published value");
            assertTrue(registry.get("fabricrpc.chunks.held").tag("rank", "0").gauge().value() >= 2);
            assertEquals("bytes", registry.get("fabricrpc.bytes.sent").tag("rank", "0").functionCounter().getId()
                    .getBaseUnit());
        } finally {
            ShmCountersTest.closeAll(fabrics);
        }
    }
}
