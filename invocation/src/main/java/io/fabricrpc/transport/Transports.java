package io.fabricrpc.transport;

import io.fabricrpc.api.TransportException;

import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeSet;

/** Opens the transport a configuration names. */
public final class Transports {
    /** Configuration key naming the transport; {@value #DEFAULT_KIND} when absent. */
    public static final String KIND_KEY = "fabric.transport";
    public static final String DEFAULT_KIND = "shm";

    private Transports() {
    }

    /**
     * Opens an endpoint of the transport named by {@value #KIND_KEY} in {@code config}.
     *
     * @throws TransportException if no provider of that kind is on the class path (listing the ones that are)
     */
    public static Transport open(Map<String, String> config) {
        String kind = config.getOrDefault(KIND_KEY, DEFAULT_KIND);
        TreeSet<String> available = new TreeSet<>();
        for (TransportProvider provider : ServiceLoader.load(TransportProvider.class)) {
            if (provider.kind().equals(kind)) {
                return provider.open(config);
            }
            available.add(provider.kind());
        }
        throw new TransportException("no transport of kind '" + kind + "' (" + KIND_KEY + ") on the class path;"
                + " available: " + available);
    }
}
