package io.fabricrpc.metrics;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.counters.CounterTypes;
import io.fabricrpc.counters.ProcessCounters;
import io.fabricrpc.invocation.FabricRuntime;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * A Micrometer {@link MeterBinder} for one process's counters: per counter type a {@link FunctionCounter} (or a
 * {@link Gauge} for the levels: chunks held, async queue bytes) named {@code fabricrpc.calls.sent},
 * {@code fabricrpc.calls.run}, {@code fabricrpc.bytes.sent}, ..., tagged {@code rank}, {@code instance} and
 * {@code job}. Each meter reads the totals the counters publisher last wrote (the same values as the counters file
 * and JMX), never the call path. Micrometer is an optional dependency: only this package needs it.
 */
public final class FabricMetrics implements MeterBinder {
    private final ProcessCounters counters;

    public FabricMetrics(ProcessCounters counters) {
        this.counters = java.util.Objects.requireNonNull(counters, "counters");
    }

    /**
     * The binder of the process {@code fabric} is (the instance {@link Fabric#join} returned).
     *
     * @throws IllegalStateException if the fabric runs without counters ({@code fabric.counters=false})
     */
    public static FabricMetrics of(Fabric fabric) {
        if (!(fabric instanceof FabricRuntime runtime)) {
            throw new IllegalArgumentException("pass the Fabric that Fabric.join returned, not a view of it: "
                    + fabric.getClass().getName());
        }
        ProcessCounters counters = runtime.processCounters();
        if (counters == null) {
            throw new IllegalStateException("rank " + fabric.rank() + " runs without counters (fabric.counters=false"
                    + " or its counters file could not be made): there is nothing to bind");
        }
        return new FabricMetrics(counters);
    }

    /** The meter name of a counter type: {@code CallsSent} becomes {@code fabricrpc.calls.sent}. */
    public static String meterName(int typeId) {
        return "fabricrpc" + CounterTypes.name(typeId).replaceAll("([A-Z])", ".$1").toLowerCase(java.util.Locale.ROOT);
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Tags tags = Tags.of("rank", Integer.toString(counters.rank()), "instance",
                Integer.toString(counters.instance()), "job", counters.jobId());
        for (int type = 1; type <= CounterTypes.MAX_TYPE; type++) {
            int t = type;
            String unit = type == CounterTypes.BYTES_SENT || type == CounterTypes.ASYNC_QUEUE_BYTES ? "bytes" : null;
            String description = CounterTypes.name(type) + " over this process's counters, as last published";
            if (CounterTypes.isGauge(type)) {
                Gauge.builder(meterName(type), counters, c -> c.total(t)).tags(tags).baseUnit(unit)
                        .description(description).register(registry);
            } else {
                FunctionCounter.builder(meterName(type), counters, c -> c.total(t)).tags(tags).baseUnit(unit)
                        .description(description).register(registry);
            }
        }
    }
}
