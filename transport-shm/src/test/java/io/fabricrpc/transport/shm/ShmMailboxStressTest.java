package io.fabricrpc.transport.shm;

import io.fabricrpc.mailbox.MailboxStressTest;
import io.fabricrpc.transport.TransportFixture;

class ShmMailboxStressTest extends MailboxStressTest {
    @Override
    protected TransportFixture fixture() {
        return ShmFixture.INSTANCE;
    }
}
