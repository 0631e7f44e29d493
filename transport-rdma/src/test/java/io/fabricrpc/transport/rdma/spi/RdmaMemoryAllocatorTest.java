package io.fabricrpc.transport.rdma.spi;

import io.fabricrpc.memory.MemoryAllocatorTest;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.condition.EnabledIf;

@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class RdmaMemoryAllocatorTest extends MemoryAllocatorTest {
    static {
        // The guest emulates its CPUs: fewer rounds, same checks.
        if (System.getProperty("fabricrpc.memory.bestfit.rounds") == null) {
            System.setProperty("fabricrpc.memory.bestfit.rounds", "600");
        }
    }

    @Override
    protected TransportFixture fixture() {
        return RdmaFixture.INSTANCE;
    }
}
