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

class FabricrpcCommandTest {
    private static final List<String> ALL_CHECKS = List.of("jdk", "jvm-flags", "shm-mount", "shm-space", "shm-dir",
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
}
