package io.fabricrpc.transport.shm;

import io.fabricrpc.invocation.FabricTest;
import io.fabricrpc.transport.TransportFixture;

class ShmFabricTest extends FabricTest {
    @Override
    protected TransportFixture fixture() {
        return ShmFixture.INSTANCE;
    }
}
