package io.fabricrpc.transport.shm;

import io.fabricrpc.transport.Transport;
import io.fabricrpc.api.TransportException;
import io.fabricrpc.transport.TransportProvider;

import java.nio.file.Path;
import java.util.Map;

/** Makes {@code fabric.transport=shm} open a {@link ShmTransport}. */
public final class ShmTransportProvider implements TransportProvider {
    @Override
    public String kind() {
        return ShmTransport.KIND;
    }

    @Override
    public Transport open(Map<String, String> config) {
        return new ShmTransport(Path.of(config.getOrDefault("shm.dir", "/dev/shm")),
                (int) number(config, "shm.messageQueueBytes", 65536),
                number(config, "shm.heartbeatMillis", 20),
                number(config, "shm.peerTimeoutMillis", 10_000),
                Boolean.parseBoolean(config.getOrDefault("shm.directWindows", "true")));
    }

    private static long number(Map<String, String> config, String key, long defaultValue) {
        String value = config.get(key);
        if (value == null) {
            return defaultValue;
        }
        try {
            long parsed = Long.parseLong(value.trim());
            if (parsed <= 0) {
                throw new TransportException(key + " must be positive, got " + value);
            }
            return parsed;
        } catch (NumberFormatException e) {
            throw new TransportException(key + " must be a number, got '" + value + "'");
        }
    }
}
