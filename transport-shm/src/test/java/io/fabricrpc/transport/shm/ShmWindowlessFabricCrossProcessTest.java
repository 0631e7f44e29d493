package io.fabricrpc.transport.shm;

import io.fabricrpc.invocation.FabricCrossProcessTest;
import io.fabricrpc.transport.TransportFixture;

/** The cross-process suite through shm links without direct windows: RDMA's staged, deferred path. */
class ShmWindowlessFabricCrossProcessTest extends FabricCrossProcessTest {
    @Override
    protected TransportFixture fixture() {
        return ShmFixture.WINDOWLESS;
    }
}
