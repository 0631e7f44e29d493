package io.fabricrpc.transport.rdma.spi;

import io.fabricrpc.invocation.FabricCrossProcessTest;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.condition.EnabledIf;

/** Three (and two) JVMs over RDMA, including a peer killed with SIGKILL. */
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class RdmaFabricCrossProcessTest extends FabricCrossProcessTest {
    private static final TransportFixture FIXTURE = RdmaFixture.INSTANCE; // scales the load before any test

    @Override
    protected TransportFixture fixture() {
        return FIXTURE;
    }
}
