package io.fabricrpc.transport.rdma.spi;

import io.fabricrpc.invocation.ReturnCallsContractTest;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.condition.EnabledIf;

/** The callReturn contract over real verbs (the Soft-RoCE guest on machines without an RDMA device). */
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class RdmaReturnCallsContractTest extends ReturnCallsContractTest {
    private static final TransportFixture FIXTURE = RdmaFixture.INSTANCE;

    @Override
    protected TransportFixture fixture() {
        return FIXTURE;
    }
}
