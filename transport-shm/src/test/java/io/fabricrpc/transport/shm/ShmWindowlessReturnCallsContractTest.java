package io.fabricrpc.transport.shm;

import io.fabricrpc.invocation.ReturnCallsContractTest;
import io.fabricrpc.transport.TransportFixture;

/** The callReturn contract through shm links without direct windows: RDMA's staged path. */
class ShmWindowlessReturnCallsContractTest extends ReturnCallsContractTest {
    @Override
    protected TransportFixture fixture() {
        return ShmFixture.WINDOWLESS;
    }
}
