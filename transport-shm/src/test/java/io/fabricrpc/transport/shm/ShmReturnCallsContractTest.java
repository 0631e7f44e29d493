package io.fabricrpc.transport.shm;

import io.fabricrpc.invocation.ReturnCallsContractTest;
import io.fabricrpc.transport.TransportFixture;

class ShmReturnCallsContractTest extends ReturnCallsContractTest {
    @Override
    protected TransportFixture fixture() {
        return ShmFixture.INSTANCE;
    }
}
