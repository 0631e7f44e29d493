package io.fabricrpc.transport.rdma.spi;

import io.fabricrpc.transport.EndpointAddress;
import io.fabricrpc.api.TransportException;
import io.fabricrpc.transport.rdma.nativelib.DisniNativeLibrary;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Enumeration;

/**
 * The {@code rdma} endpoint address: {@code | ipv4 (4) | port (4) | endpoint id (8) |}, little-endian, and how to
 * find the IPv4 address of the interface behind an RDMA device.
 */
final class RdmaAddresses {
    static final int LENGTH = 16;

    record Decoded(Inet4Address ip, int port, long endpointId) {
    }

    private RdmaAddresses() {
    }

    static EndpointAddress encode(Inet4Address ip, int port, long endpointId) {
        ByteBuffer b = ByteBuffer.allocate(LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        b.put(ip.getAddress()).putInt(port).putLong(endpointId);
        return new EndpointAddress(RdmaTransport.KIND, b.array());
    }

    static Decoded decode(EndpointAddress address) {
        if (!RdmaTransport.KIND.equals(address.kind())) {
            throw new TransportException("cannot connect an rdma endpoint to a '" + address.kind() + "' address " + address);
        }
        byte[] bytes = address.bytes();
        if (bytes.length != LENGTH) {
            throw new TransportException("rdma address " + address + " has " + bytes.length + " bytes, expected " + LENGTH);
        }
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        byte[] ip = new byte[4];
        b.get(ip);
        try {
            return new Decoded((Inet4Address) InetAddress.getByAddress(ip), b.getInt(), b.getLong());
        } catch (UnknownHostException e) {
            throw new TransportException("rdma address " + address + " has a malformed IPv4 address", e);
        }
    }

    static int ipv4(Inet4Address ip) {
        return ByteBuffer.wrap(ip.getAddress()).getInt();
    }

    /** The IPv4 address of the first interface that backs an RDMA device (its port 1 GID table names the netdev). */
    static Inet4Address rdmaInterfaceAddress() {
        DisniNativeLibrary.requireRdmaDevice();
        try (DirectoryStream<Path> devices = Files.newDirectoryStream(Path.of("/sys/class/infiniband"))) {
            for (Path device : devices) {
                Path netdevs = device.resolve("ports/1/gid_attrs/ndevs");
                if (!Files.isDirectory(netdevs)) {
                    continue;
                }
                try (DirectoryStream<Path> entries = Files.newDirectoryStream(netdevs)) {
                    for (Path entry : entries) {
                        Inet4Address found = ipv4Of(entry);
                        if (found != null) {
                            return found;
                        }
                    }
                }
            }
        } catch (IOException e) {
            throw new TransportException("cannot list RDMA devices under /sys/class/infiniband: " + e.getMessage()
                    + "; set rdma.bindAddress", e);
        }
        throw new TransportException("no IPv4 address on any interface backing an RDMA device "
                + "(/sys/class/infiniband/*/ports/1/gid_attrs/ndevs); set rdma.bindAddress");
    }

    private static Inet4Address ipv4Of(Path gidNetdevEntry) throws IOException {
        String netdev;
        try {
            netdev = Files.readString(gidNetdevEntry).trim();
        } catch (IOException unusedGidEntry) {
            return null; // unused GID table entries cannot be read
        }
        NetworkInterface nif = NetworkInterface.getByName(netdev);
        if (nif == null) {
            return null;
        }
        for (Enumeration<InetAddress> e = nif.getInetAddresses(); e.hasMoreElements(); ) {
            if (e.nextElement() instanceof Inet4Address v4) {
                return v4;
            }
        }
        return null;
    }
}
