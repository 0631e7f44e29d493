package io.fabricrpc.transport.rdma.hybrid;

import io.fabricrpc.invocation.FabricTest;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.condition.EnabledIf;

/** The shared Fabric suite over the hybrid transport, links on the shm path (fixture {@code ONE_HOST}). */
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class HybridShmPathFabricTest extends FabricTest {
    @Override
    protected TransportFixture fixture() {
        return HybridFixture.ONE_HOST;
    }
}
