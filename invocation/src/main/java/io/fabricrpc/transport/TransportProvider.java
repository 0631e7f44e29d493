package io.fabricrpc.transport;

import java.util.Map;

/**
 * Service-provider interface ({@link java.util.ServiceLoader}) through which {@link Transports} finds the
 * transports on the class path, so a job picks its transport by configuration rather than by code.
 */
public interface TransportProvider {
    /** The name configuration selects this provider by ({@code fabric.transport=<kind>}). */
    String kind();

    /**
     * Opens an endpoint. {@code config} holds the job's settings; a provider reads the keys under its own
     * prefix ({@code shm.*}, {@code rdma.*}) and rejects malformed values with a message naming the key.
     */
    Transport open(Map<String, String> config);
}
