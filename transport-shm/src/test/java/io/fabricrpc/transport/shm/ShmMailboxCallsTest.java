package io.fabricrpc.transport.shm;

import io.fabricrpc.invocation.MailboxCallsTest;
import io.fabricrpc.transport.TransportFixture;

class ShmMailboxCallsTest extends MailboxCallsTest {
    @Override
    protected TransportFixture fixture() {
        return ShmFixture.INSTANCE;
    }
}
