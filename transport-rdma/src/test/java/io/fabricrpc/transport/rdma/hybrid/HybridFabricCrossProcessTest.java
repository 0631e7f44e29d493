package io.fabricrpc.transport.rdma.hybrid;

import io.fabricrpc.invocation.FabricCrossProcessTest;
import io.fabricrpc.transport.TransportFixture;
import io.fabricrpc.transport.rdma.spi.RdmaFixture;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.condition.EnabledIf;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The fabric's cross-process suite over the hybrid transport, with ranks 0 and 1 on one "host" and rank 2 on another
 * (per-rank {@code hybrid.hostId}): the stress run mixes the shm path (0-1) and the rdma path (0-2, 1-2) between
 * separate JVMs, and the killed-peer run (ranks 0 and 1) kills a peer reached through shared memory.
 */
@Tag("multi-jvm") // minutes in the guest
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class HybridFabricCrossProcessTest extends FabricCrossProcessTest {
    private static final TransportFixture FIXTURE = new TransportFixture() {
        private final RdmaFixture rdma = RdmaFixture.INSTANCE; // scales the load and widens the guest's timeouts

        @Override
        public Map<String, String> config() {
            Map<String, String> config = new HashMap<>(HybridFixture.config(null));
            config.put("fabricrpc.test.perRank.hybrid.hostId", "host-a,host-a,host-b");
            return config;
        }

        @Override
        public List<String> childJvmOptions() {
            return rdma.childJvmOptions();
        }

        @Override
        public boolean isProcessWideThread(String threadName) {
            return rdma.isProcessWideThread(threadName);
        }
    };

    @Override
    protected TransportFixture fixture() {
        return FIXTURE;
    }

    /** Three ranks whatever the RDMA fixture's default, so that both paths carry the stress run. */
    @Override
    protected int stressProcesses() {
        return 3;
    }
}
