package io.fabricrpc.transport.shm;

import io.fabricrpc.invocation.FabricTest;
import io.fabricrpc.transport.TransportFixture;

/** The fabric suite through shm links without direct windows: RDMA's staged, deferred path. */
class ShmWindowlessFabricTest extends FabricTest {
    @Override
    protected TransportFixture fixture() {
        return ShmFixture.WINDOWLESS;
    }
}
