package io.fabricrpc.transport.shm;

import io.fabricrpc.invocation.FabricCrossProcessTest;
import io.fabricrpc.transport.TransportFixture;

class ShmFabricCrossProcessTest extends FabricCrossProcessTest {
    @Override
    protected TransportFixture fixture() {
        return ShmFixture.INSTANCE;
    }
}
