package io.fabricrpc.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabricrpc.doctor.MiniJson;
import io.fabricrpc.transport.rdma.nativelib.DisniNativeLibrary;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FabricrpcCommandTest {
    private static final List<String> ALL_CHECKS = List.of("jdk", "path-java", "jvm-flags", "shm-mount", "shm-space", "shm-dir",
            "memlock", "max-map-count", "hugepages", "rdma-device", "roce-gid", "libdisni", "rdma-peer");

    private record Run(int status, String out, String err) {
    }

    private static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int status = FabricrpcCommand.execute(new PrintWriter(out), new PrintWriter(err), args);
        return new Run(status, out.toString(), err.toString());
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> checks(Run run) {
        return (List<Map<String, Object>>) ((Map<String, Object>) MiniJson.parse(run.out().trim())).get("checks");
    }

    @Test
    void jsonParsesAndListsEveryCheckWithAllFields() {
        Run run = run("doctor", "--json", "--transport", "hybrid");
        List<Map<String, Object>> checks = checks(run);
        assertEquals(ALL_CHECKS, checks.stream().map(c -> c.get("name")).toList(), run.out());
        for (Map<String, Object> c : checks) {
            assertTrue(List.of("ok", "warn", "fail", "skip").contains(c.get("status")), c.toString());
            assertTrue(c.get("observed") instanceof String && c.get("fix") instanceof String, c.toString());
        }
    }

    @Test
    void rdmaWithoutADeviceFailsWithExitStatusOneAndShmSkipsTheRdmaChecks() {
        if (DisniNativeLibrary.hasRdmaDevice()) {
            return; // this host has RDMA: the device checks may pass, nothing to assert here
        }
        Run rdma = run("doctor", "--json", "--transport", "rdma");
        assertEquals(1, rdma.status(), rdma.out());
        Map<String, Object> device = checks(rdma).stream().filter(c -> c.get("name").equals("rdma-device"))
                .findFirst().orElseThrow();
        assertEquals("fail", device.get("status"));
        assertTrue(((String) device.get("observed")).contains("no RDMA device"), device.toString());

        Run shm = run("doctor", "--json", "--transport", "shm");
        checks(shm).stream().filter(c -> List.of("rdma-device", "roce-gid", "libdisni", "rdma-peer", "memlock")
                .contains(c.get("name"))).forEach(c -> assertEquals("skip", c.get("status"), c.toString()));
    }

    @Test
    void textOutputNamesTheFixOfAFailingCheck() {
        if (DisniNativeLibrary.hasRdmaDevice()) {
            return;
        }
        Run run = run("doctor", "--transport", "rdma", "--peer", "10.0.0.2");
        assertEquals(1, run.status());
        assertTrue(run.out().contains("FAIL  rdma-device") && run.out().contains("fix: install rdma-core"), run.out());
        assertTrue(run.out().contains("SKIP  rdma-peer") && run.out().contains("no ACTIVE RDMA port"), run.out());
    }

    @Test
    void aBadTransportIsAUsageError() {
        Run run = run("doctor", "--transport", "carrier-pigeon");
        assertEquals(2, run.status());
        assertTrue(run.err().contains("--transport"), run.err());
    }

    @TempDir
    java.nio.file.Path temp;

    private static io.fabricrpc.api.Fabric joinAlone(java.nio.file.Path counters) {
        io.fabricrpc.api.JobConfig job = io.fabricrpc.api.JobConfig.builder().rank(0).size(1).threadsPerProcess(1)
                .coordinator("127.0.0.1", io.fabricrpc.invocation.LocalJob.freePort())
                .jobSecret(io.fabricrpc.invocation.LocalJob.SECRET).build();
        return io.fabricrpc.api.Fabric.join(io.fabricrpc.api.FabricConfig.of(job,
                        io.fabricrpc.api.SerializationRegistry.builder()
                                .allowCapturingClass(FabricrpcCommandTest.class).build())
                .withTransport(Map.of("fabric.transport", "shm", "fabric.counters.dir", counters.toString(),
                        "fabric.counters.periodMillis", "10")));
    }

    static final java.util.concurrent.atomic.AtomicInteger RAN = new java.util.concurrent.atomic.AtomicInteger();

    @Test
    @SuppressWarnings("unchecked")
    void statJsonShowsALiveFabricsCounters() throws Exception {
        java.nio.file.Path dir = temp.resolve("counters");
        try (io.fabricrpc.api.Fabric fabric = joinAlone(dir)) {
            fabric.startHandlerThreads();
            io.fabricrpc.api.Synchronizer sync = new io.fabricrpc.api.Synchronizer(io.fabricrpc.api.Synchronizer.Mode.CONSUMED);
            for (int i = 0; i < 100; i++) {
                fabric.call(new io.fabricrpc.api.ThreadId(0, 0), () -> RAN.incrementAndGet(), sync);
            }
            sync.await(java.time.Duration.ofSeconds(30));
            Map<String, Object> file = null;
            for (int tries = 0; tries < 500; tries++) {
                Run run = run("stat", "--json", "--dir", dir.toString());
                assertEquals(0, run.status(), run.out() + run.err());
                List<Map<String, Object>> files = (List<Map<String, Object>>)
                        ((Map<String, Object>) MiniJson.parse(run.out().trim())).get("files");
                assertEquals(1, files.size(), run.out());
                file = files.get(0);
                boolean seen = ((List<Map<String, Object>>) file.get("counters")).stream().anyMatch(c ->
                        c.get("label").toString().startsWith("calls run ") && ((Number) c.get("value")).longValue() == 100);
                if (seen) {
                    break;
                }
                Thread.sleep(10);
            }
            assertEquals(ProcessHandle.current().pid(), ((Number) file.get("pid")).longValue());
            assertEquals(true, file.get("alive"));
            List<Map<String, Object>> counters = (List<Map<String, Object>>) file.get("counters");
            assertTrue(counters.stream().anyMatch(c -> c.get("label").toString().startsWith("calls sent ")
                    && ((Number) c.get("value")).longValue() == 100), counters.toString());
            assertTrue(counters.stream().anyMatch(c -> c.get("label").toString().startsWith("calls run ")
                    && ((Number) c.get("value")).longValue() == 100), counters.toString());

            Run table = run("stat", "--count", "2", "--interval", "1", "--dir", dir.toString());
            assertEquals(0, table.status(), table.err());
            assertTrue(table.out().contains("calls sent 0/") && table.out().contains("rank 0  pid "), table.out());
        }
    }

    @Test
    void statNamesACorruptFileInOneLineAndExitsOne() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createDirectories(temp.resolve("bad"));
        java.nio.file.Files.write(dir.resolve("123-1-r0.counters"), "not a counters file at all".getBytes());
        byte[] version = new byte[4096];
        java.nio.ByteBuffer.wrap(version).order(java.nio.ByteOrder.nativeOrder())
                .putLong(0, io.fabricrpc.counters.CountersFileDescriptor.MAGIC).putInt(8, 99);
        java.nio.file.Files.write(dir.resolve("124-1-r1.counters"), version);
        Run json = run("stat", "--json", "--dir", dir.toString());
        assertEquals(1, json.status(), json.out());
        assertTrue(json.out().contains("truncated: 26 bytes, shorter than the 128-byte header"), json.out());
        assertTrue(json.out().contains("layout version 99, this reader reads version 1"), json.out());
        Run text = run("stat", "--count", "1", "--dir", dir.toString());
        assertEquals(1, text.status());
        List<String> errors = text.out().lines().filter(l -> l.startsWith("error: ")).toList();
        assertEquals(2, errors.size(), text.out());
        assertTrue(errors.get(0).contains("123-1-r0.counters: truncated"), errors.toString());
        assertTrue(!text.out().contains("Exception") && text.err().isEmpty(), text.out() + text.err());
    }
}
