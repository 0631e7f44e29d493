package io.fabricrpc.counters;

import java.util.function.LongSupplier;

/**
 * A fixed set of counters, each a label, a type and a read of its owner's field (an opaque or acquire load: the
 * owner keeps writing it). For owners whose counts are a few fields; sources with their own lifecycle implement
 * {@link CounterSource} themselves.
 */
public final class CounterSet implements CounterSource {
    /** One counter: its label, one of {@link CounterTypes}, and the agent thread's read of the value. */
    public record Counter(String label, int typeId, LongSupplier loValue) {
    }

    private final Counter[] counters;

    public CounterSet(Counter... counters) {
        this.counters = counters.clone();
    }

    @Override
    public int counterCount() {
        return counters.length;
    }

    @Override
    public String label(int index) {
        return counters[index].label();
    }

    @Override
    public int typeId(int index) {
        return counters[index].typeId();
    }

    @Override
    public long loValue(int index) {
        return counters[index].loValue().getAsLong();
    }
}
