package io.fabricrpc.transport.shm;

import io.fabricrpc.mailbox.MailboxCrossProcessTest;
import io.fabricrpc.transport.TransportFixture;

class ShmMailboxCrossProcessTest extends MailboxCrossProcessTest {
    @Override
    protected TransportFixture fixture() {
        return ShmFixture.INSTANCE;
    }
}
