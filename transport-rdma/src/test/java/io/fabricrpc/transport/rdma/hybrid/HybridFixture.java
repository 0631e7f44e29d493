package io.fabricrpc.transport.rdma.hybrid;

import io.fabricrpc.transport.TransportFixture;
import io.fabricrpc.transport.rdma.RdmaTestSupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs the shared suites over the hybrid transport in one JVM. {@link #ONE_HOST}: every endpoint has this machine's
 * host identity, so links take the shm path. {@link #DISTINCT_HOSTS}: every configuration (one per endpoint or
 * rank) names a host of its own through {@code hybrid.hostId}, so links between endpoints take the rdma path.
 * Stress-style suites are scaled down as in the rdma fixture (the guest emulates its CPUs).
 */
final class HybridFixture implements TransportFixture {
    static final HybridFixture ONE_HOST = new HybridFixture(false);
    static final HybridFixture DISTINCT_HOSTS = new HybridFixture(true);
    private static final AtomicInteger HOSTS = new AtomicInteger();

    static {
        setIfAbsent("fabricrpc.messenger.records", "2000");
        setIfAbsent("fabricrpc.stress.calls", "2000");
        setIfAbsent("fabricrpc.fabric.stress.calls", "2000");
    }

    private final boolean distinctHosts;

    private HybridFixture(boolean distinctHosts) {
        this.distinctHosts = distinctHosts;
    }

    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    static Map<String, String> config(String hostId) {
        try {
            String bind = RdmaTestSupport.rdmaAddress().getHostAddress();
            return hostId == null
                    ? Map.of("fabric.transport", "hybrid", "rdma.bindAddress", bind)
                    : Map.of("fabric.transport", "hybrid", "rdma.bindAddress", bind, "hybrid.hostId", hostId);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public Map<String, String> config() {
        return config(distinctHosts ? "test-host-" + HOSTS.incrementAndGet() : null);
    }
}
