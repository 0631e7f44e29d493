package io.fabricrpc.transport.shm;

import io.fabricrpc.aggregation.AggregationTest;
import io.fabricrpc.transport.TransportFixture;

class ShmAggregationTest extends AggregationTest {
    @Override
    protected TransportFixture fixture() {
        return ShmFixture.INSTANCE;
    }
}
