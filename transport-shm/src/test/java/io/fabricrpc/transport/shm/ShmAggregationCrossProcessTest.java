package io.fabricrpc.transport.shm;

import io.fabricrpc.aggregation.AggregationCrossProcessTest;
import io.fabricrpc.transport.TransportFixture;

class ShmAggregationCrossProcessTest extends AggregationCrossProcessTest {
    @Override
    protected TransportFixture fixture() {
        return ShmFixture.INSTANCE;
    }
}
