package io.fabricrpc.transport.rdma.spi;

import io.fabricrpc.api.JobConfig;
import io.fabricrpc.transport.TransportFixture;
import io.fabricrpc.transport.rdma.RdmaTestSupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;

/**
 * Runs the shared suites over RDMA verbs (Soft-RoCE in the guest): endpoints bind an ephemeral port on the IPv4
 * address of the RDMA interface; child JVMs get the same address through the config ({@code -Drdma.bindAddress}).
 * The load of the stress-style suites is scaled down unless set explicitly, because the guest emulates its CPUs
 * (TCG) and rxe does the NIC's work in software. The suites read these properties when a test starts, so test
 * classes hold {@link #INSTANCE} in a static field: the class initialization sets them before any test runs.
 */
public final class RdmaFixture implements TransportFixture {
    public static final RdmaFixture INSTANCE = new RdmaFixture();

    static {
        setIfAbsent("fabricrpc.messenger.records", "2000");
        setIfAbsent("fabricrpc.handshakeTimeoutMillis", "60000"); // when this JVM coordinates cold child JVMs
        setIfAbsent("fabricrpc.stress.calls", "2000");
        setIfAbsent("fabricrpc.fabric.stress.calls", "2000");
        setIfAbsent("fabricrpc.aggregation.stress.calls", "4000");
        // Cross-process suites (the parent reads them and passes the counts to its children).
        setIfAbsent("fabricrpc.crossprocess.calls", "500"); // per caller thread, 2 threads
        // Two JVMs, not three: three starting at once in the guest miss the coordinator's 10 s handshake limit.
        setIfAbsent("fabricrpc.fabric.crossprocess.processes", "2");
        setIfAbsent("fabricrpc.fabric.crossprocess.perPair", "200"); // 4 workers: 3,200 calls
        setIfAbsent("fabricrpc.aggregation.crossprocess.perPair", "250"); // 4 workers: 4,000 calls per mode
    }

    private static void setIfAbsent(String key, String value) {
        if (System.getProperty(key) == null) {
            System.setProperty(key, value);
        }
    }

    /**
     * Child JVMs in the guest start slowly (emulated CPUs, several JVMs at once): a wide join timeout, a failure
     * timeout that a starved JVM cannot trip (killed peers are seen at once by their closed connections, not by
     * silence), one GC thread and no perf-data file (both shorten the start), and a connect timeout that a freshly
     * started peer, accepting four workers' connections at once, can meet (3 s is missed in the guest).
     */
    @Override
    public List<String> childJvmOptions() {
        return List.of("-D" + JobConfig.propertyName(JobConfig.ENV_JOIN_TIMEOUT_MS) + "=180000",
                "-D" + JobConfig.propertyName(JobConfig.ENV_FAILURE_TIMEOUT_MS) + "=10000", "-XX:+UseSerialGC",
                "-XX:-UsePerfData", "-Drdma.connectTimeoutMillis=30000",
                "-Dfabricrpc.handshakeTimeoutMillis=60000"); // cold JVMs in the guest miss the 10 s default
    }

    /** The bounded-connect watchdog: one idle scheduler thread per JVM, started by the first connect. */
    @Override
    public boolean isProcessWideThread(String threadName) {
        return threadName.equals("fabricrpc-rdma-connect-watchdog");
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
