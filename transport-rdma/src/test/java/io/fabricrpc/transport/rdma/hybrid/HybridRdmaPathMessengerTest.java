package io.fabricrpc.transport.rdma.hybrid;

import io.fabricrpc.messaging.MessengerTest;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.condition.EnabledIf;

/** The shared Messenger suite over the hybrid transport, links on the rdma path (fixture {@code DISTINCT_HOSTS}). */
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class HybridRdmaPathMessengerTest extends MessengerTest {
    @Override
    protected TransportFixture fixture() {
        return HybridFixture.DISTINCT_HOSTS;
    }
}
