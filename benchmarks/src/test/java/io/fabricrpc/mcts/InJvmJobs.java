package io.fabricrpc.mcts;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.JobConfig;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.UUID;

/** A one-process job in the test's own JVM (shared memory unless -Dfabric.transport says otherwise). */
public final class InJvmJobs {
    private InJvmJobs() {
    }

    public static Fabric join(int threads) {
        int port;
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            port = s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        JobConfig job = JobConfig.builder().rank(0).size(1).threadsPerProcess(threads).coordinator("127.0.0.1", port)
                .jobSecret(UUID.randomUUID().toString()).joinTimeout(Duration.ofSeconds(30)).build();
        return Fabric.join(FabricConfig.of(job, MctsSearch.registry().build()));
    }
}
