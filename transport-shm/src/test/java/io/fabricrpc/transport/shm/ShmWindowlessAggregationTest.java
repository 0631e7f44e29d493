package io.fabricrpc.transport.shm;

import io.fabricrpc.aggregation.AggregationTest;
import io.fabricrpc.transport.TransportFixture;

/** The aggregation suite through shm links without direct windows: RDMA's staged, deferred path. */
class ShmWindowlessAggregationTest extends AggregationTest {
    @Override
    protected TransportFixture fixture() {
        return ShmFixture.WINDOWLESS;
    }
}
