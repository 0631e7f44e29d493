package io.fabricrpc.transport;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * What a peer needs to {@link Transport#connect connect} to an endpoint: the transport kind plus opaque,
 * transport-defined bytes (a directory and endpoint id for shared memory; an IP address and port for RDMA).
 * Small and serializable, so bootstrap can carry it over any channel.
 */
public record EndpointAddress(String kind, byte[] bytes) {
    public EndpointAddress {
        if (kind == null || kind.isEmpty()) {
            throw new IllegalArgumentException("endpoint address needs a transport kind");
        }
        bytes = bytes.clone();
    }

    @Override
    public byte[] bytes() {
        return bytes.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EndpointAddress other && kind.equals(other.kind) && Arrays.equals(bytes, other.bytes);
    }

    @Override
    public int hashCode() {
        return kind.hashCode() * 31 + Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        return kind + ":" + HexFormat.of().formatHex(bytes);
    }
}
