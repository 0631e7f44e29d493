package io.fabricrpc.transport.shm;

import io.fabricrpc.messaging.MessengerTest;
import io.fabricrpc.transport.TransportFixture;

class ShmMessengerTest extends MessengerTest {
    @Override
    protected TransportFixture fixture() {
        return ShmFixture.INSTANCE;
    }
}
