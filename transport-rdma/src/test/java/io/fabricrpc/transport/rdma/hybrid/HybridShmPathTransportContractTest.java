package io.fabricrpc.transport.rdma.hybrid;

import io.fabricrpc.transport.TransportContractTest;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.condition.EnabledIf;

/** The shared TransportContract suite over the hybrid transport, links on the shm path (fixture {@code ONE_HOST}). */
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class HybridShmPathTransportContractTest extends TransportContractTest {
    @Override
    protected TransportFixture fixture() {
        return HybridFixture.ONE_HOST;
    }
}
