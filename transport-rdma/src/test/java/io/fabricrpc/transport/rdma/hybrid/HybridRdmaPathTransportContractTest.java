package io.fabricrpc.transport.rdma.hybrid;

import io.fabricrpc.transport.TransportContractTest;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.condition.EnabledIf;

/** The shared TransportContract suite over the hybrid transport, links on the rdma path (fixture {@code DISTINCT_HOSTS}). */
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class HybridRdmaPathTransportContractTest extends TransportContractTest {
    @Override
    protected TransportFixture fixture() {
        return HybridFixture.DISTINCT_HOSTS;
    }
}
