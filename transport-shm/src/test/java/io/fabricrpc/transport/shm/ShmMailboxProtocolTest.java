package io.fabricrpc.transport.shm;

import io.fabricrpc.mailbox.MailboxProtocolTest;
import io.fabricrpc.transport.TransportFixture;

class ShmMailboxProtocolTest extends MailboxProtocolTest {
    @Override
    protected TransportFixture fixture() {
        return ShmFixture.INSTANCE;
    }
}
