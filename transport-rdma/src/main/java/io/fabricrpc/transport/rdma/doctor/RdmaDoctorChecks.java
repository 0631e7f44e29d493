package io.fabricrpc.transport.rdma.doctor;

import io.fabricrpc.doctor.CheckResult;
import io.fabricrpc.doctor.DoctorCheckProvider;
import io.fabricrpc.doctor.DoctorContext;
import io.fabricrpc.doctor.Host;
import io.fabricrpc.doctor.Status;
import io.fabricrpc.transport.rdma.nativelib.DisniNativeLibrary;
import io.fabricrpc.transport.rdma.nativelib.NativeLibraryException;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * RDMA checks: {@code rdma-device} (a device with an ACTIVE port), {@code roce-gid} (a RoCE v2 GID on an ACTIVE
 * Ethernet port), {@code libdisni} (loads, checksum, version stamp) and {@code rdma-peer} (only with a peer).
 * Devices missing is a failure for {@code rdma}/{@code hybrid} and a skip for {@code shm}. Never throws; every
 * directory scan is bounded.
 */
public final class RdmaDoctorChecks implements DoctorCheckProvider {
    static final String SYS_INFINIBAND = "/sys/class/infiniband";
    /** sysfs lists 128 or 256 GIDs per port; more is not a real device. */
    static final int MAX_GIDS = 1024;
    static final int MAX_ENTRIES = 64;
    static final String INSTALL = "install rdma-core (apt-get install libibverbs1 librdmacm1 ibverbs-providers "
            + "rdma-core) and check ibv_devices; without RDMA hardware: rdma link add rxe0 type rxe netdev <iface>";

    /** One port of one device as sysfs shows it. */
    record Port(String device, String port, String state, String linkLayer, List<String> roceV2Gids) {
        boolean active() {
            return state.endsWith("ACTIVE");
        }

        boolean ethernet() {
            return linkLayer.equalsIgnoreCase("Ethernet");
        }

        String describe() {
            return device + "/" + port + " " + state + " " + linkLayer;
        }
    }

    @Override
    public List<CheckResult> checks(DoctorContext ctx) {
        List<Port> ports = ports(ctx);
        List<CheckResult> results = new ArrayList<>();
        results.add(device(ctx, ports));
        results.add(gid(ctx, ports));
        results.add(library(ctx));
        results.add(PeerProbe.check(ctx, ports.stream().anyMatch(Port::active)));
        return results;
    }

    /** Every port under {@code /sys/class/infiniband} of the context's host (empty when there is none). */
    static List<Port> ports(DoctorContext ctx) {
        List<Port> ports = new ArrayList<>();
        Path base = ctx.host().path(SYS_INFINIBAND);
        for (Path device : list(base)) {
            for (Path port : list(device.resolve("ports"))) {
                String state = read(port.resolve("state")).orElse("unknown");
                String link = read(port.resolve("link_layer")).orElse("unknown");
                List<String> roceV2 = new ArrayList<>();
                for (int i = 0; i < MAX_GIDS; i++) {
                    // Unpopulated entries read as an error (EINVAL) on a real kernel: absent, not a failure.
                    Optional<String> type = read(port.resolve("gid_attrs/types/" + i));
                    if (type.isEmpty() && !Files.exists(port.resolve("gids/" + i))) {
                        break;
                    }
                    Optional<String> gid = read(port.resolve("gids/" + i));
                    if (type.map(t -> t.equalsIgnoreCase("RoCE v2")).orElse(false)
                            && gid.filter(g -> !g.replace(":", "").matches("0*")).isPresent()) {
                        roceV2.add(i + "=" + gid.get());
                    }
                }
                ports.add(new Port(device.getFileName().toString(), port.getFileName().toString(), state, link,
                        roceV2));
            }
        }
        return ports;
    }

    static CheckResult device(DoctorContext ctx, List<Port> ports) {
        if (ports.isEmpty()) {
            String observed = "no RDMA device: " + SYS_INFINIBAND + " is empty or missing";
            return ctx.usesRdma() ? new CheckResult("rdma-device", Status.FAIL, observed, INSTALL)
                    : CheckResult.skip("rdma-device", observed + " (not needed for transport shm)");
        }
        String observed = String.join("; ", ports.stream().map(Port::describe).toList());
        if (ports.stream().noneMatch(Port::active)) {
            return new CheckResult("rdma-device",
                    ctx.usesRdma() ? Status.FAIL : Status.SKIP, observed + ": no port is ACTIVE",
                    "bring the link up (cable, switch, ip link set <iface> up); check ibv_devinfo and rdma link");
        }
        return CheckResult.ok("rdma-device", observed);
    }

    static CheckResult gid(DoctorContext ctx, List<Port> ports) {
        List<Port> ethernet = ports.stream().filter(p -> p.active() && p.ethernet()).toList();
        if (ethernet.isEmpty()) {
            return CheckResult.skip("roce-gid", ports.stream().anyMatch(Port::active)
                    ? "no ACTIVE Ethernet (RoCE) port: InfiniBand needs no RoCE GID"
                    : "no ACTIVE port");
        }
        List<String> found = new ArrayList<>();
        for (Port p : ethernet) {
            p.roceV2Gids().stream().limit(4).forEach(g -> found.add(p.device() + "/" + p.port() + " gid " + g));
        }
        if (found.isEmpty()) {
            return new CheckResult("roce-gid", ctx.usesRdma() ? Status.FAIL : Status.WARN,
                    "no RoCE v2 GID on the ACTIVE Ethernet ports (rdma_cm routes by IPv4 address)",
                    "give the interface behind the device an IPv4 address (ip addr add ... dev <iface>)");
        }
        return CheckResult.ok("roce-gid", String.join("; ", found));
    }

    static CheckResult library(DoctorContext ctx) {
        if (!ctx.usesRdma()) {
            return CheckResult.skip("libdisni", "transport shm does not load libdisni.so");
        }
        String explicit = System.getProperty("fabricrpc.disni.library");
        String origin;
        Optional<String> digest;
        if (explicit != null && !explicit.isBlank()) {
            origin = "fabricrpc.disni.library=" + explicit;
            digest = sha256(() -> Files.newInputStream(Path.of(explicit)));
        } else {
            origin = "bundled " + DisniNativeLibrary.RESOURCE;
            digest = sha256(() -> DisniNativeLibrary.class.getResourceAsStream(DisniNativeLibrary.RESOURCE));
        }
        String observed = origin + ", sha256 " + digest.orElse("unavailable");
        try {
            String loaded = DisniNativeLibrary.load();
            int version = DisniNativeLibrary.loadedNativeVersion();
            return CheckResult.ok("libdisni", observed + "; loaded from " + loaded + " (unlinked after loading)"
                    + "; native version " + version + " = expected " + DisniNativeLibrary.NATIVE_VERSION);
        } catch (NativeLibraryException | LinkageError e) {
            return new CheckResult("libdisni", Status.FAIL, observed + "; " + e.getMessage(),
                    "see the message: install rdma-core, add " + DisniNativeLibrary.ADD_EXPORTS_FLAG
                            + ", or use the libdisni.so of the same transport-rdma build");
        }
    }

    @FunctionalInterface
    private interface Source {
        InputStream open() throws IOException;
    }

    private static Optional<String> sha256(Source source) {
        try (InputStream in = source.open()) {
            if (in == null) {
                return Optional.empty();
            }
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            byte[] buffer = new byte[8192];
            for (int n; (n = in.read(buffer)) > 0; ) {
                md.update(buffer, 0, n);
            }
            return Optional.of(HexFormat.of().formatHex(md.digest()));
        } catch (IOException | NoSuchAlgorithmException e) {
            return Optional.empty();
        }
    }

    private static List<Path> list(Path dir) {
        List<Path> entries = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return entries;
        }
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
            for (Path p : stream) {
                if (entries.size() >= MAX_ENTRIES) {
                    break;
                }
                entries.add(p);
            }
        } catch (IOException e) {
            return entries;
        }
        entries.sort(null);
        return entries;
    }

    private static Optional<String> read(Path file) {
        return Host.readText(file).map(String::trim);
    }
}
