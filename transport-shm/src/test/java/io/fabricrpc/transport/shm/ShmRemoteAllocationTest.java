package io.fabricrpc.transport.shm;

import io.fabricrpc.memory.RemoteAllocationTest;
import io.fabricrpc.transport.TransportFixture;

class ShmRemoteAllocationTest extends RemoteAllocationTest {
    @Override
    protected TransportFixture fixture() {
        return ShmFixture.INSTANCE;
    }
}
