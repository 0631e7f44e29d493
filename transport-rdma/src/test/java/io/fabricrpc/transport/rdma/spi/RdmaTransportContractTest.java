package io.fabricrpc.transport.rdma.spi;

import io.fabricrpc.transport.TransportContractTest;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.condition.EnabledIf;

@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class RdmaTransportContractTest extends TransportContractTest {
    @Override
    protected TransportFixture fixture() {
        return RdmaFixture.INSTANCE;
    }
}
