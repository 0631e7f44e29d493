package io.fabricrpc.transport.rdma.hybrid;

import io.fabricrpc.invocation.FabricTest;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.condition.EnabledIf;

/** The shared Fabric suite over the hybrid transport, links on the rdma path (fixture {@code DISTINCT_HOSTS}). */
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class HybridRdmaPathFabricTest extends FabricTest {
    @Override
    protected TransportFixture fixture() {
        return HybridFixture.DISTINCT_HOSTS;
    }
}
