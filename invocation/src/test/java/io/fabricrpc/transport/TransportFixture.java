package io.fabricrpc.transport;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What a transport module supplies to run the shared protocol suites: endpoints in this JVM, and the
 * configuration a child JVM uses to open an endpoint of the same transport.
 */
public interface TransportFixture {
    /** The job configuration ({@code fabric.transport} and the transport's own keys). */
    Map<String, String> config();

    /**
     * Extra options for the child JVMs the cross-process suites start, after the inherited JVM flags and the
     * configuration as system properties (e.g. wider control-plane timeouts on an emulated machine). None by default.
     */
    default List<String> childJvmOptions() {
        return List.of();
    }

    /**
     * Whether a thread of this name is a process-wide singleton of the transport (started once, kept for the JVM's
     * life), which the thread-leak checks of the suites allow to outlive an endpoint. None by default.
     */
    default boolean isProcessWideThread(String threadName) {
        return false;
    }

    /** This fixture with {@code keys} added to (or replacing those of) its configuration. */
    default TransportFixture with(Map<String, String> keys) {
        TransportFixture base = this;
        Map<String, String> merged = new HashMap<>(base.config());
        merged.putAll(keys);
        return new TransportFixture() {
            @Override
            public Map<String, String> config() {
                return merged;
            }

            @Override
            public List<String> childJvmOptions() {
                return base.childJvmOptions();
            }

            @Override
            public boolean isProcessWideThread(String threadName) {
                return base.isProcessWideThread(threadName);
            }
        };
    }

    /** Opens a new endpoint in this JVM. */
    default Transport open() {
        return Transports.open(config());
    }
}
