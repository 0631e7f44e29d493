package io.fabricrpc.transport.rdma.hybrid;

import io.fabricrpc.transport.EndpointAddress;
import io.fabricrpc.api.TransportException;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The {@code hybrid} endpoint address, also the payload of the hybrid HELLO message. Little-endian:
 *
 * <pre>
 *  0                 8        12               12+h     16+h              16+h+s   20+h+s
 *  +-----------------+--------+----------------+--------+-----------------+--------+------------------+
 *  | endpoint id     | h      | host id (UTF-8)| s      | shm address     | r      | rdma address     |
 *  +-----------------+--------+----------------+--------+-----------------+--------+------------------+
 *  endpoint id:  the hybrid endpoint id (= the id of its inner rdma endpoint, unique in the job)
 *  h, s, r:      byte lengths of the next field (int32)
 *  host id:      peers with equal host ids connect over shared memory, others over RDMA
 *  shm address:  the inner shm endpoint's address bytes; rdma address: the inner rdma endpoint's address bytes
 * </pre>
 */
record HybridAddress(long endpointId, String hostId, EndpointAddress shm, EndpointAddress rdma) {
    static final String KIND = "hybrid";
    static final String SHM_KIND = "shm";
    static final String RDMA_KIND = "rdma";
    static final int MAX_HOST_ID_BYTES = 255;
    private static final int MAX_INNER_BYTES = 4096;

    HybridAddress {
        int hostBytes = hostId.getBytes(StandardCharsets.UTF_8).length;
        if (hostBytes == 0 || hostBytes > MAX_HOST_ID_BYTES) {
            throw new TransportException("hybrid.hostId must have 1 to " + MAX_HOST_ID_BYTES + " UTF-8 bytes, got "
                    + hostBytes + " ('" + hostId + "')");
        }
        if (!SHM_KIND.equals(shm.kind()) || !RDMA_KIND.equals(rdma.kind())) {
            throw new TransportException("a hybrid address holds an shm and an rdma address, got " + shm + " and " + rdma);
        }
    }

    EndpointAddress encode() {
        byte[] host = hostId.getBytes(StandardCharsets.UTF_8);
        byte[] shmBytes = shm.bytes();
        byte[] rdmaBytes = rdma.bytes();
        ByteBuffer b = ByteBuffer.allocate(8 + 12 + host.length + shmBytes.length + rdmaBytes.length)
                .order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(endpointId).putInt(host.length).put(host).putInt(shmBytes.length).put(shmBytes)
                .putInt(rdmaBytes.length).put(rdmaBytes);
        return new EndpointAddress(KIND, b.array());
    }

    /** Decodes a peer's address; a foreign kind or malformed bytes are a {@link TransportException} naming them. */
    static HybridAddress decode(EndpointAddress address) {
        if (!KIND.equals(address.kind())) {
            throw new TransportException("cannot connect a hybrid endpoint to a '" + address.kind() + "' address "
                    + address + " (every process of the job must use fabric.transport=hybrid)");
        }
        return decode(address.bytes(), address.toString());
    }

    /** Decodes the bytes of an address (a HELLO payload); {@code what} names them in the error message. */
    static HybridAddress decode(byte[] bytes, String what) {
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        try {
            long id = b.getLong();
            String host = new String(field(b, MAX_HOST_ID_BYTES, "host id", what), StandardCharsets.UTF_8);
            EndpointAddress shm = new EndpointAddress(SHM_KIND, field(b, MAX_INNER_BYTES, "shm address", what));
            EndpointAddress rdma = new EndpointAddress(RDMA_KIND, field(b, MAX_INNER_BYTES, "rdma address", what));
            if (b.hasRemaining()) {
                throw new TransportException("hybrid address " + what + " has " + b.remaining() + " trailing bytes");
            }
            return new HybridAddress(id, host, shm, rdma);
        } catch (BufferUnderflowException e) {
            throw new TransportException("hybrid address " + what + " is truncated (" + bytes.length + " bytes)");
        }
    }

    private static byte[] field(ByteBuffer b, int max, String name, String what) {
        int length = b.getInt();
        if (length < 0 || length > max || length > b.remaining()) {
            throw new TransportException("hybrid address " + what + ": " + name + " length " + length
                    + " is outside [0, " + Math.min(max, b.remaining()) + "]");
        }
        byte[] field = new byte[length];
        b.get(field);
        return field;
    }
}
