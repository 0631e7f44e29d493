package io.fabricrpc.doctor;

import static io.fabricrpc.doctor.FakeHost.ALL_FLAGS;
import static io.fabricrpc.doctor.FakeHost.context;
import static io.fabricrpc.doctor.FakeHost.host;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DoctorTest {
    @TempDir
    Path root;
    @TempDir
    Path shm;

    private DoctorContext ctx(String transport) {
        return context(transport, shm, host(root, ALL_FLAGS, 1L << 33, 1L << 33, "nobody-here"));
    }

    @Test
    void withoutTheRdmaModuleRdmaFailsAndShmSkips() {
        Report rdma = Doctor.run(ctx("rdma"), List.of());
        CheckResult missing = rdma.checks().stream().filter(c -> c.name().equals(Doctor.RDMA_TRANSPORT_CHECK))
                .findFirst().orElseThrow();
        assertEquals(Status.FAIL, missing.status());
        assertEquals(1, rdma.exitStatus());
        Report shmReport = Doctor.run(ctx("shm"), List.of());
        assertEquals(0, shmReport.exitStatus(), shmReport.toText());
    }

    @Test
    void aProviderThatThrowsBecomesAFailureNotACrash() {
        Report r = Doctor.run(ctx("shm"), List.of(c -> {
            throw new IllegalStateException("boom");
        }));
        assertTrue(r.failed());
        assertTrue(r.toText().contains("boom"), r.toText());
    }

    @Test
    void jsonParsesAndListsEveryCheck() {
        Report r = Doctor.run(ctx("hybrid"), List.of(c -> List.of(new CheckResult("weird \"name\"\n", Status.WARN,
                "tab\there \u0001", "back\\slash"))));
        @SuppressWarnings("unchecked")
        Map<String, Object> json = (Map<String, Object>) MiniJson.parse(r.toJson());
        assertEquals("hybrid", json.get("transport"));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> checks = (List<Map<String, Object>>) json.get("checks");
        assertEquals(r.checks().size(), checks.size());
        for (int i = 0; i < checks.size(); i++) {
            assertEquals(r.checks().get(i).name(), checks.get(i).get("name"));
            assertEquals(r.checks().get(i).status().label(), checks.get(i).get("status"));
            assertEquals(r.checks().get(i).observed(), checks.get(i).get("observed"));
            assertEquals(r.checks().get(i).fix(), checks.get(i).get("fix"));
        }
        assertEquals((double) r.exitStatus(), json.get("exitStatus"));
    }

    @Test
    void exitStatusIsOneOnlyWhenACheckFails() {
        assertEquals(0, new Report("shm", List.of(CheckResult.ok("a", ""), CheckResult.skip("b", ""),
                new CheckResult("c", Status.WARN, "", "x"))).exitStatus());
        Report failing = new Report("shm", List.of(new CheckResult("c", Status.FAIL, "bad", "do this")));
        assertEquals(1, failing.exitStatus());
        assertFalse((Boolean) ((Map<?, ?>) MiniJson.parse(failing.toJson())).get("ok"));
        assertTrue(failing.toText().contains("fix: do this"), failing.toText());
    }
}
