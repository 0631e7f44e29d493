package io.fabricrpc.transport.rdma.spi;

import io.fabricrpc.invocation.FabricTest;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.condition.EnabledIf;

@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class RdmaFabricTest extends FabricTest {
    private static final TransportFixture FIXTURE = RdmaFixture.INSTANCE; // scales the load before any test

    @Override
    protected TransportFixture fixture() {
        return FIXTURE;
    }
}
