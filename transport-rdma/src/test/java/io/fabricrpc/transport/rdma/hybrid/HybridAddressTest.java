package io.fabricrpc.transport.rdma.hybrid;

import io.fabricrpc.transport.EndpointAddress;
import io.fabricrpc.api.TransportException;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The address format and the host identity; no device needed. */
class HybridAddressTest {
    private static final EndpointAddress SHM = new EndpointAddress("shm", new byte[]{1, 2, 3, 4, 5, 6, 7, 8, '/', 'x'});
    private static final EndpointAddress RDMA = new EndpointAddress("rdma", new byte[16]);

    @Test
    void roundTripsEveryField() {
        HybridAddress address = new HybridAddress(0x0A00000212340007L, "node-7/boot", SHM, RDMA);
        EndpointAddress encoded = address.encode();
        assertEquals("hybrid", encoded.kind());
        assertEquals(address, HybridAddress.decode(encoded));
    }

    @Test
    void rejectsForeignKindsAndMalformedBytes() {
        TransportException foreign = assertThrows(TransportException.class, () -> HybridAddress.decode(SHM));
        assertTrue(foreign.getMessage().contains("'shm'"), foreign.getMessage());
        byte[] bytes = new HybridAddress(1, "h", SHM, RDMA).encode().bytes();
        TransportException truncated = assertThrows(TransportException.class,
                () -> HybridAddress.decode(Arrays.copyOf(bytes, bytes.length - 1), "test"));
        assertTrue(truncated.getMessage().contains("length 16"), truncated.getMessage());
        bytes[8] = (byte) 0xFF; // host id length 255 + ... > what is left
        assertThrows(TransportException.class, () -> HybridAddress.decode(bytes, "test"));
        assertThrows(TransportException.class, () -> new HybridAddress(1, "x".repeat(256), SHM, RDMA));
    }

    @Test
    void hostIdentityIsConfiguredOrHostnameAndBootId() {
        assertEquals("rack3-node12", HostIdentity.of(Map.of("hybrid.hostId", " rack3-node12 ")));
        assertThrows(TransportException.class, () -> HostIdentity.of(Map.of("hybrid.hostId", "  ")));
        String detected = HostIdentity.of(Map.of());
        assertTrue(detected.matches(".+/[0-9a-f-]{36}"), detected);
        assertEquals(detected, HostIdentity.of(Map.of()));
    }
}
