package io.fabricrpc.transport.shm;

import io.fabricrpc.aggregation.AggregationCrossProcessTest;
import io.fabricrpc.transport.TransportFixture;

/** The cross-process suite through shm links without direct windows: RDMA's staged, deferred path. */
class ShmWindowlessAggregationCrossProcessTest extends AggregationCrossProcessTest {
    @Override
    protected TransportFixture fixture() {
        return ShmFixture.WINDOWLESS;
    }
}
