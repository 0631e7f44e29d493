package io.fabricrpc.transport.rdma.hybrid;

import io.fabricrpc.messaging.MessengerTest;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.condition.EnabledIf;

/** The shared Messenger suite over the hybrid transport, links on the shm path (fixture {@code ONE_HOST}). */
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class HybridShmPathMessengerTest extends MessengerTest {
    @Override
    protected TransportFixture fixture() {
        return HybridFixture.ONE_HOST;
    }
}
