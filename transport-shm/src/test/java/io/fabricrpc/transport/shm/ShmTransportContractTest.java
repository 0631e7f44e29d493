package io.fabricrpc.transport.shm;

import io.fabricrpc.transport.TransportContractTest;
import io.fabricrpc.transport.TransportFixture;

class ShmTransportContractTest extends TransportContractTest {
    @Override
    protected TransportFixture fixture() {
        return ShmFixture.INSTANCE;
    }
}
