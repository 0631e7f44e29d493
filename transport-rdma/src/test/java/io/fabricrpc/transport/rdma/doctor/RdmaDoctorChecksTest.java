package io.fabricrpc.transport.rdma.doctor;

import static io.fabricrpc.doctor.FakeHost.ALL_FLAGS;
import static io.fabricrpc.doctor.FakeHost.host;
import static io.fabricrpc.doctor.FakeHost.write;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabricrpc.doctor.CheckResult;
import io.fabricrpc.doctor.Doctor;
import io.fabricrpc.doctor.DoctorContext;
import io.fabricrpc.doctor.Host;
import io.fabricrpc.doctor.Report;
import io.fabricrpc.doctor.Status;
import io.fabricrpc.api.MessengerConfig;
import io.fabricrpc.transport.rdma.nativelib.DisniNativeLibrary;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RdmaDoctorChecksTest {
    private static final String GID_V2 = "0000:0000:0000:0000:0000:ffff:0a00:020f";
    private static final String LINK_LOCAL = "fe80:0000:0000:0000:5054:00ff:fe12:3456";

    @TempDir
    Path root;

    private DoctorContext ctx(String transport, Optional<String> peer) {
        Host host = host(root, ALL_FLAGS, 1L << 30, 1L << 30, "nobody");
        return new DoctorContext(transport, Map.of(), 2, 1, MessengerConfig.defaults(), peer, host);
    }

    private void port(String device, String state, String link, String... gidsAndTypes) {
        String p = "/sys/class/infiniband/" + device + "/ports/1/";
        write(root, p + "state", state + "\n");
        write(root, p + "link_layer", link + "\n");
        for (int i = 0; i < gidsAndTypes.length / 2; i++) {
            write(root, p + "gids/" + i, gidsAndTypes[2 * i] + "\n");
            write(root, p + "gid_attrs/types/" + i, gidsAndTypes[2 * i + 1] + "\n");
        }
    }

    private static CheckResult named(List<CheckResult> results, String name) {
        return results.stream().filter(r -> r.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    void noDeviceFailsForRdmaAndSkipsForShm() {
        List<CheckResult> rdma = new RdmaDoctorChecks().checks(ctx("rdma", Optional.of("10.0.0.2")));
        CheckResult device = named(rdma, "rdma-device");
        assertEquals(Status.FAIL, device.status());
        assertTrue(device.observed().contains("no RDMA device"), device.observed());
        assertTrue(device.fix().contains("rdma-core") && device.fix().contains("rdma link add"), device.fix());
        assertEquals(Status.SKIP, named(rdma, "rdma-peer").status(), "no device: the probe cannot run");

        List<CheckResult> shm = new RdmaDoctorChecks().checks(ctx("shm", Optional.empty()));
        assertTrue(shm.stream().allMatch(r -> r.status() == Status.SKIP), shm.toString());
    }

    @Test
    void anActiveRocePortWithAV2GidIsOk() {
        port("rxe0", "4: ACTIVE", "Ethernet", LINK_LOCAL, "IB/RoCE v1", LINK_LOCAL, "RoCE v2",
                GID_V2, "IB/RoCE v1", GID_V2, "RoCE v2");
        DoctorContext c = ctx("rdma", Optional.empty());
        List<RdmaDoctorChecks.Port> ports = RdmaDoctorChecks.ports(c);
        assertEquals(Status.OK, RdmaDoctorChecks.device(c, ports).status());
        CheckResult gid = RdmaDoctorChecks.gid(c, ports);
        assertEquals(Status.OK, gid.status(), gid.toString());
        assertTrue(gid.observed().contains("rxe0/1 gid 3=" + GID_V2), gid.observed());
    }

    @Test
    void aDownPortOrAMissingV2GidFailsForRdma() {
        port("mlx5_0", "1: DOWN", "Ethernet");
        DoctorContext c = ctx("rdma", Optional.empty());
        CheckResult down = RdmaDoctorChecks.device(c, RdmaDoctorChecks.ports(c));
        assertEquals(Status.FAIL, down.status());
        assertTrue(down.observed().contains("no port is ACTIVE"), down.observed());

        port("mlx5_0", "4: ACTIVE", "Ethernet", LINK_LOCAL, "IB/RoCE v1");
        CheckResult gid = RdmaDoctorChecks.gid(c, RdmaDoctorChecks.ports(c));
        assertEquals(Status.FAIL, gid.status(), gid.toString());
        assertTrue(gid.fix().contains("IPv4"), gid.fix());
    }

    @Test
    void infinibandNeedsNoRoceGid() {
        port("mlx4_0", "4: ACTIVE", "InfiniBand", LINK_LOCAL, "IB/RoCE v1");
        DoctorContext c = ctx("hybrid", Optional.empty());
        assertEquals(Status.SKIP, RdmaDoctorChecks.gid(c, RdmaDoctorChecks.ports(c)).status());
    }

    @Test
    void theBundledLibraryLoadsWithTheExpectedVersionStamp() {
        assertEquals(DisniNativeLibrary.NATIVE_VERSION, DisniNativeLibrary.loadedNativeVersion());
        CheckResult lib = RdmaDoctorChecks.library(ctx("rdma", Optional.empty()));
        assertEquals(Status.OK, lib.status(), lib.toString());
        assertTrue(lib.observed().matches(".*sha256 [0-9a-f]{64}.*"), lib.observed());
        assertTrue(lib.observed().contains("native version 1 = expected 1"), lib.observed());
    }

    @Test
    void peerParsing() {
        assertEquals(7471, PeerProbe.parse("10.0.0.2").getPort());
        assertEquals(9000, PeerProbe.parse("10.0.0.2:9000").getPort());
        assertThrows(IllegalArgumentException.class, () -> PeerProbe.parse("10.0.0.2:x"));
    }

    @Test
    void theDoctorFindsTheseChecksThroughTheServiceLoader() {
        Report report = Doctor.run(ctx("rdma", Optional.empty()));
        List<String> names = report.checks().stream().map(CheckResult::name).toList();
        assertTrue(names.containsAll(List.of("rdma-device", "roce-gid", "libdisni", "rdma-peer")), names.toString());
        assertTrue(!names.contains(Doctor.RDMA_TRANSPORT_CHECK), names.toString());
        assertEquals(1, report.exitStatus(), "no device in the fake tree: rdma must fail");
    }
}
