package io.fabricrpc.transport.shm;

import io.fabricrpc.messaging.MessengerTest;
import io.fabricrpc.transport.Transport;
import io.fabricrpc.transport.TransportFixture;
import io.fabricrpc.transport.WindowlessTransport;

import java.util.Map;

/** The messenger suite over shared memory through links without a mapped window: RDMA's staged, deferred path. */
class ShmWindowlessMessengerTest extends MessengerTest {
    private static final TransportFixture WINDOWLESS = new TransportFixture() {
        @Override
        public Map<String, String> config() {
            return ShmFixture.INSTANCE.config();
        }

        @Override
        public Transport open() {
            return new WindowlessTransport(ShmFixture.INSTANCE.open());
        }
    };

    @Override
    protected TransportFixture fixture() {
        return WINDOWLESS;
    }
}
