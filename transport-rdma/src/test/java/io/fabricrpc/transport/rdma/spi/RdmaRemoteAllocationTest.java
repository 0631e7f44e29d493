package io.fabricrpc.transport.rdma.spi;

import io.fabricrpc.memory.RemoteAllocationTest;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.condition.EnabledIf;

@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class RdmaRemoteAllocationTest extends RemoteAllocationTest {
    @Override
    protected TransportFixture fixture() {
        return RdmaFixture.INSTANCE;
    }
}
