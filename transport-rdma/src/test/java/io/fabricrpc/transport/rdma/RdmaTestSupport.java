package io.fabricrpc.transport.rdma;

import io.fabricrpc.transport.rdma.nativelib.DisniNativeLibrary;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Enumeration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Shared by the device tests: whether they can run, the IPv4 address of an RDMA-capable interface, fresh ports.
 * Device tests are {@code @EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")}: skipped on
 * machines without a device, but with {@code -Dfabricrpc.rdma.required=true} (set by scripts/rdma-tests.sh) they run
 * and fail loudly instead.
 */
public final class RdmaTestSupport {
    public static final String JVM_FLAGS_EXPORTS = "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED";
    private static final AtomicInteger NEXT_PORT = new AtomicInteger(20000 + (int) (ProcessHandle.current().pid() % 200) * 100);
    private static volatile InetAddress address;

    private RdmaTestSupport() {
    }

    public static boolean rdmaAvailable() {
        return Boolean.getBoolean("fabricrpc.rdma.required") || DisniNativeLibrary.hasRdmaDevice();
    }

    public static int nextPort() {
        return NEXT_PORT.getAndIncrement();
    }

    public static InetSocketAddress nextAddress() throws IOException {
        return new InetSocketAddress(rdmaAddress(), nextPort());
    }

    /** The IPv4 address of the first network interface that backs an RDMA device ({@code fabricrpc.rdma.address} overrides). */
    public static InetAddress rdmaAddress() throws IOException {
        InetAddress a = address;
        if (a != null) {
            return a;
        }
        String explicit = System.getProperty("fabricrpc.rdma.address");
        if (explicit != null) {
            return address = InetAddress.getByName(explicit);
        }
        DisniNativeLibrary.requireRdmaDevice();
        try (DirectoryStream<Path> devices = Files.newDirectoryStream(Path.of("/sys/class/infiniband"))) {
            for (Path device : devices) {
                Path ndevs = device.resolve("ports/1/gid_attrs/ndevs");
                if (!Files.isDirectory(ndevs)) {
                    continue;
                }
                try (DirectoryStream<Path> entries = Files.newDirectoryStream(ndevs)) {
                    for (Path entry : entries) {
                        String netdev;
                        try {
                            netdev = Files.readString(entry).trim();
                        } catch (IOException unusedGid) {
                            continue;
                        }
                        NetworkInterface nif = NetworkInterface.getByName(netdev);
                        if (nif == null) {
                            continue;
                        }
                        for (Enumeration<InetAddress> e = nif.getInetAddresses(); e.hasMoreElements(); ) {
                            InetAddress candidate = e.nextElement();
                            if (candidate instanceof Inet4Address) {
                                return address = candidate;
                            }
                        }
                    }
                }
            }
        }
        throw new IOException("no IPv4 address on any interface backing an RDMA device (/sys/class/infiniband/*/ports/1/"
                + "gid_attrs/ndevs); set -Dfabricrpc.rdma.address");
    }

    /** Fills {@code len} bytes with a pattern that differs per seed and per position. */
    public static byte patternByte(int seed, int i) {
        return (byte) (i * 31 + seed * 7 + (i >>> 8));
    }
}
