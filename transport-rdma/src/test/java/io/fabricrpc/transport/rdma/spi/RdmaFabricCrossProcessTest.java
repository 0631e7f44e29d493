package io.fabricrpc.transport.rdma.spi;

import io.fabricrpc.invocation.FabricCrossProcessTest;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.condition.EnabledIf;

/** Two JVMs over RDMA (RdmaFixture sets two processes for the stress run), including a peer killed with SIGKILL. */
@Tag("multi-jvm") // minutes in the guest: not in scripts/rdma-tests.sh's default selection
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class RdmaFabricCrossProcessTest extends FabricCrossProcessTest {
    private static final TransportFixture FIXTURE = RdmaFixture.INSTANCE; // scales the load before any test

    @Override
    protected TransportFixture fixture() {
        return FIXTURE;
    }
}
