package io.fabricrpc.aggregation;

import io.fabricrpc.counters.CounterSource;
import io.fabricrpc.counters.CounterTypes;
import io.fabricrpc.messaging.Messenger;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/** An aggregator's counts (batches, flushes, push-outs by the agent; see {@link Aggregator}), read with opaque loads. */
final class AggregatorCounters implements CounterSource {
    private static final VarHandle[] COUNTS = new VarHandle[3];

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            COUNTS[0] = lookup.findVarHandle(Aggregator.class, "batches", long.class);
            COUNTS[1] = lookup.findVarHandle(Aggregator.class, "flushes", long.class);
            COUNTS[2] = lookup.findVarHandle(Aggregator.class, "pushOuts", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Aggregator aggregator;
    private final String name;

    AggregatorCounters(Aggregator aggregator, Messenger messenger) {
        this.aggregator = aggregator;
        this.name = CounterTypes.channel(messenger.sender(), messenger.destination());
    }

    @Override
    public int counterCount() {
        return 3;
    }

    @Override
    public String label(int index) {
        return switch (index) {
            case 0 -> "aggregation batches " + name;
            case 1 -> "aggregation flushes " + name;
            default -> "aggregation push-outs " + name;
        };
    }

    @Override
    public int typeId(int index) {
        return switch (index) {
            case 0 -> CounterTypes.AGGREGATION_BATCHES;
            case 1 -> CounterTypes.AGGREGATION_FLUSHES;
            default -> CounterTypes.AGGREGATION_PUSH_OUTS;
        };
    }

    @Override
    public long loValue(int index) {
        return (long) COUNTS[index].getOpaque(aggregator);
    }
}
