package io.fabricrpc.transport;

import java.util.Map;

/**
 * What a transport module supplies to run the shared protocol suites: endpoints in this JVM, and the
 * configuration a child JVM uses to open an endpoint of the same transport.
 */
public interface TransportFixture {
    /** The job configuration ({@code fabric.transport} and the transport's own keys). */
    Map<String, String> config();

    /** Opens a new endpoint in this JVM. */
    default Transport open() {
        return Transports.open(config());
    }
}
