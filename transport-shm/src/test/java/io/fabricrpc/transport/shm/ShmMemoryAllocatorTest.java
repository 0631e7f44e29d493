package io.fabricrpc.transport.shm;

import io.fabricrpc.memory.MemoryAllocatorTest;
import io.fabricrpc.transport.TransportFixture;

class ShmMemoryAllocatorTest extends MemoryAllocatorTest {
    @Override
    protected TransportFixture fixture() {
        return ShmFixture.INSTANCE;
    }
}
