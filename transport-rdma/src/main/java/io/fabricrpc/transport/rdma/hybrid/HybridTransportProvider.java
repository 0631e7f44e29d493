package io.fabricrpc.transport.rdma.hybrid;

import io.fabricrpc.transport.Transport;
import io.fabricrpc.api.TransportException;
import io.fabricrpc.transport.TransportProvider;
import io.fabricrpc.transport.rdma.spi.RdmaTransport;
import io.fabricrpc.transport.rdma.spi.RdmaTransportProvider;
import io.fabricrpc.transport.shm.ShmTransportProvider;

import java.util.Map;

/**
 * Makes {@code fabric.transport=hybrid} open a {@link HybridTransport}: an shm endpoint and an rdma endpoint opened
 * from the same configuration ({@code shm.*}, {@code rdma.*}), plus {@code hybrid.hostId} and
 * {@code hybrid.connectTimeoutMillis}.
 */
public final class HybridTransportProvider implements TransportProvider {
    static final String CONNECT_TIMEOUT_KEY = "hybrid.connectTimeoutMillis";

    @Override
    public String kind() {
        return HybridTransport.KIND;
    }

    @Override
    public Transport open(Map<String, String> config) {
        String hostId = HostIdentity.of(config);
        long connectTimeoutMillis = connectTimeoutMillis(config);
        Transport shm = new ShmTransportProvider().open(config);
        try {
            RdmaTransport rdma = (RdmaTransport) new RdmaTransportProvider().open(config);
            try {
                return new HybridTransport(shm, rdma, hostId, connectTimeoutMillis);
            } catch (RuntimeException e) {
                rdma.close();
                throw e;
            }
        } catch (RuntimeException e) {
            shm.close();
            throw e;
        }
    }

    private static long connectTimeoutMillis(Map<String, String> config) {
        String value = config.get(CONNECT_TIMEOUT_KEY);
        if (value == null) {
            return 10_000;
        }
        try {
            long parsed = Long.parseLong(value.trim());
            if (parsed > 0 && parsed <= 3_600_000) {
                return parsed;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new TransportException(CONNECT_TIMEOUT_KEY + " must be a number of milliseconds in [1, 3600000], got '"
                + value + "'");
    }
}
