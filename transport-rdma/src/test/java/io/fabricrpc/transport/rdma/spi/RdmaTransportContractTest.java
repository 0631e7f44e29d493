package io.fabricrpc.transport.rdma.spi;

import io.fabricrpc.transport.TransportContractTest;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.condition.EnabledIf;

@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class RdmaTransportContractTest extends TransportContractTest {
    private static final TransportFixture FIXTURE = RdmaFixture.INSTANCE; // scales the load before any test

    @Override
    protected TransportFixture fixture() {
        return FIXTURE;
    }
}
