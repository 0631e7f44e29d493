package io.fabricrpc.transport.rdma.spi;

import io.fabricrpc.transport.EndpointAddress;
import io.fabricrpc.api.TransportException;
import io.fabricrpc.transport.TransportProvider;
import org.junit.jupiter.api.Test;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.Map;
import java.util.ServiceLoader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Configuration and address handling; needs no RDMA device, so it runs on the host too. */
class RdmaSettingsTest {
    private static final String LOCAL = "127.0.0.1";

    @Test
    void defaultsAreConsistent() {
        RdmaSettings s = RdmaSettings.from(Map.of("rdma.bindAddress", LOCAL));
        assertEquals(0, s.port());
        assertTrue(s.signalInterval() < s.sqDepth(), s.toString());
        assertEquals(4088, s.maxMessageSize());
    }

    @Test
    void aSignalIntervalNotBelowTheQueueDepthIsRejectedNamingBoth() {
        TransportException e = assertThrows(TransportException.class, () -> RdmaSettings.from(Map.of(
                "rdma.bindAddress", LOCAL, "rdma.sendQueueDepth", "16", "rdma.signalInterval", "16")));
        assertTrue(e.getMessage().contains("rdma.signalInterval") && e.getMessage().contains("16"), e.getMessage());
    }

    @Test
    void malformedValuesNameTheKey() {
        TransportException notANumber = assertThrows(TransportException.class, () -> RdmaSettings.from(
                Map.of("rdma.bindAddress", LOCAL, "rdma.receiveQueueDepth", "many")));
        assertTrue(notANumber.getMessage().contains("rdma.receiveQueueDepth"), notANumber.getMessage());
        TransportException outOfRange = assertThrows(TransportException.class, () -> RdmaSettings.from(
                Map.of("rdma.bindAddress", LOCAL, "rdma.port", "70000")));
        assertTrue(outOfRange.getMessage().contains("rdma.port"), outOfRange.getMessage());
        TransportException v6 = assertThrows(TransportException.class, () -> RdmaSettings.from(
                Map.of("rdma.bindAddress", "::1")));
        assertTrue(v6.getMessage().contains("IPv4"), v6.getMessage());
    }

    @Test
    void addressesRoundTripAndForeignKindsAreRejected() throws Exception {
        Inet4Address ip = (Inet4Address) InetAddress.getByName("10.0.2.15");
        EndpointAddress address = RdmaAddresses.encode(ip, 4791, 0x0A00020F12B70001L);
        RdmaAddresses.Decoded decoded = RdmaAddresses.decode(address);
        assertEquals(ip, decoded.ip());
        assertEquals(4791, decoded.port());
        assertEquals(0x0A00020F12B70001L, decoded.endpointId());
        TransportException foreign = assertThrows(TransportException.class,
                () -> RdmaAddresses.decode(new EndpointAddress("shm", new byte[16])));
        assertTrue(foreign.getMessage().contains("shm"), foreign.getMessage());
    }

    @Test
    void theProviderIsFoundByKind() {
        boolean found = false;
        for (TransportProvider provider : ServiceLoader.load(TransportProvider.class)) {
            found |= provider.kind().equals(RdmaTransport.KIND) && provider instanceof RdmaTransportProvider;
        }
        assertTrue(found, "no TransportProvider of kind rdma on the class path");
    }
}
