package io.fabricrpc.aggregation;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.invocation.ChannelFactory;
import io.fabricrpc.invocation.ChannelViews;
import io.fabricrpc.api.FullPolicy;
import io.fabricrpc.messaging.Messenger;
import io.fabricrpc.api.MessengerConfig;
import io.fabricrpc.messaging.RecordChannel;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Aggregated invocation (Seriema §4.4.2): the same {@link Fabric} API, with each sender thread's one-sided calls to
 * each destination going through an aggregator (the "global" form: aggregators are created on demand per
 * destination). Switching is one line:
 *
 * <pre>{@code
 * Fabric calls = Aggregation.traditional(fabric, AggregationConfig.traditional());
 * calls.call(dest, () -> Tree.LOCAL.expand(node, move));   // batched, flushed every 4 KiB / 1 ms / flush()
 * }</pre>
 *
 * Calls of one thread to one destination run in order within a view (direct and exceeding calls alike);
 * calls made through different views are different channels and are not ordered with each other.
 */
public final class Aggregation {
    private Aggregation() {
    }

    public static Fabric traditional(Fabric fabric, AggregationConfig config) {
        return of(fabric, new AggregationConfig(AggregationConfig.Mode.TRADITIONAL, config.batchBytes(), config.maxDelay(),
                config.exceedingLimit(), config.onLimit()));
    }

    public static Fabric overflow(Fabric fabric, AggregationConfig config) {
        return of(fabric, new AggregationConfig(AggregationConfig.Mode.OVERFLOW, config.batchBytes(), config.maxDelay(),
                config.exceedingLimit(), config.onLimit()));
    }

    /** An aggregating view of {@code fabric} in {@code config.mode()}. */
    public static Fabric of(Fabric fabric, AggregationConfig config) {
        ChannelViews views = ChannelViews.of(fabric);
        AggregationDuty duty = AggregationDuty.of(views.agent());
        return views.view(new ChannelFactory() {
            @Override
            public MessengerConfig messengerConfig(MessengerConfig jobDefault) {
                // OVERFLOW must learn that the chunks are full instead of waiting inside the messenger.
                return config.mode() == AggregationConfig.Mode.OVERFLOW ? jobDefault.withFullPolicy(FullPolicy.FAIL)
                        : jobDefault.fullPolicy() == FullPolicy.RETRY_ASYNC ? jobDefault.withFullPolicy(FullPolicy.RETRY)
                        : jobDefault;
            }

            @Override
            public RecordChannel wrap(Messenger messenger) {
                return config.mode() == AggregationConfig.Mode.TRADITIONAL
                        ? new TraditionalAggregator(messenger, config, duty)
                        : new OverflowAggregator(messenger, config, views.transport(), duty);
            }
        });
    }

    /**
     * Shutdown of the calling thread's aggregators in {@code view}: flushes every pending call and sends each
     * destination the one-way shutdown signal behind them (as the MCTS framework of the paper does).
     */
    public static void shutdown(Fabric view) {
        ChannelViews.shutdownChannels(view);
    }

    /** Bytes of the calling thread's calls that {@code view} holds locally (batched or exceeding), not yet sent. */
    public static long bufferedBytes(Fabric view) {
        return ChannelViews.bufferedBytes(view);
    }

    /**
     * Runs the calling worker's calls until it has received {@code signals} shutdown signals (one per symmetrical
     * aggregator that shut down), or fails after {@code timeout}.
     */
    public static void awaitShutdownSignals(Fabric fabric, long signals, Duration timeout) {
        ChannelViews runtime = ChannelViews.of(fabric);
        LongSupplier received = runtime::shutdownSignalsReceived;
        long deadline = System.nanoTime() + timeout.toNanos();
        while (received.getAsLong() < signals) {
            if (runtime.processCalls() == 0) {
                Thread.onSpinWait();
            }
            if (System.nanoTime() > deadline) {
                throw new io.fabricrpc.api.MessagingException("received " + received.getAsLong() + " of " + signals
                        + " shutdown signals within " + timeout.toMillis() + " ms");
            }
        }
    }
}
