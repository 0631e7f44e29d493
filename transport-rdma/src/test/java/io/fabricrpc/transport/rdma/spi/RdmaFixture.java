package io.fabricrpc.transport.rdma.spi;

import io.fabricrpc.transport.TransportFixture;
import io.fabricrpc.transport.rdma.RdmaTestSupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * Runs the shared suites over RDMA verbs (Soft-RoCE in the guest): endpoints bind an ephemeral port on the IPv4
 * address of the RDMA interface. The load of the stress-style suites is scaled down unless set explicitly, because
 * the guest emulates its CPUs (TCG) and rxe does the NIC's work in software.
 */
final class RdmaFixture implements TransportFixture {
    static final RdmaFixture INSTANCE = new RdmaFixture();

    static {
        setIfAbsent("fabricrpc.messenger.records", "2000");
        setIfAbsent("fabricrpc.stress.calls", "2000");
        setIfAbsent("fabricrpc.fabric.stress.calls", "2000");
    }

    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    @Override
    public Map<String, String> config() {
        try {
            return Map.of("fabric.transport", "rdma", "rdma.bindAddress",
                    RdmaTestSupport.rdmaAddress().getHostAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
