package io.fabricrpc.transport.rdma.spi;

import io.fabricrpc.mailbox.MailboxCrossProcessTest;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.condition.EnabledIf;

/** The mailbox between two JVMs over RDMA, including a server killed with SIGKILL mid-call. */
@Tag("multi-jvm") // minutes in the guest: not in scripts/rdma-tests.sh's default selection
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class RdmaMailboxCrossProcessTest extends MailboxCrossProcessTest {
    private static final TransportFixture FIXTURE = RdmaFixture.INSTANCE; // scales the load before any test

    @Override
    protected TransportFixture fixture() {
        return FIXTURE;
    }

    @Override
    protected boolean failuresNameThePeerPid() {
        return false; // an RDMA link knows the peer's endpoint id, not its process
    }
}
