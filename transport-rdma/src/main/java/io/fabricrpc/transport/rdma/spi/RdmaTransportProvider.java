package io.fabricrpc.transport.rdma.spi;

import io.fabricrpc.transport.Transport;
import io.fabricrpc.api.TransportException;
import io.fabricrpc.transport.TransportProvider;

import java.util.Map;

/** Makes {@code fabric.transport=rdma} open an {@link RdmaTransport}; see there for the {@code rdma.*} keys. */
public final class RdmaTransportProvider implements TransportProvider {
    @Override
    public String kind() {
        return RdmaTransport.KIND;
    }

    @Override
    public Transport open(Map<String, String> config) {
        return new RdmaTransport(RdmaSettings.from(config));
    }

    static long number(Map<String, String> config, String key, long defaultValue, long min, long max) {
        String value = config.get(key);
        if (value == null) {
            return defaultValue;
        }
        long parsed;
        try {
            parsed = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new TransportException(key + " must be a number, got '" + value + "'");
        }
        if (parsed < min || parsed > max) {
            throw new TransportException(key + " must be in [" + min + ", " + max + "], got " + value);
        }
        return parsed;
    }

    static void check(boolean condition, String message) {
        if (!condition) {
            throw new TransportException(message);
        }
    }
}
