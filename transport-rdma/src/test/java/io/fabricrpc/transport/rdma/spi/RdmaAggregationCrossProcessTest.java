package io.fabricrpc.transport.rdma.spi;

import io.fabricrpc.aggregation.AggregationCrossProcessTest;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.condition.EnabledIf;

/** Two JVMs over RDMA; the children inherit the JVM flags (and the guest's JIT limit) and the RDMA address. */
@Tag("multi-jvm") // minutes in the guest: not in scripts/rdma-tests.sh's default selection
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class RdmaAggregationCrossProcessTest extends AggregationCrossProcessTest {
    private static final TransportFixture FIXTURE = RdmaFixture.INSTANCE; // scales the load before any test

    @Override
    protected TransportFixture fixture() {
        return FIXTURE;
    }
}
