package io.fabricrpc.benchmarks.table2;

import io.fabricrpc.aggregation.Aggregation;
import io.fabricrpc.aggregation.AggregationConfig;
import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.invocation.ChannelFactory;
import io.fabricrpc.invocation.ChannelViews;
import io.fabricrpc.messaging.Messenger;
import io.fabricrpc.api.MessengerConfig;
import io.fabricrpc.messaging.RecordChannel;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * The named columns a run can measure, in the order a full table shows them. A column is built the same way on
 * both ranks, on the measuring thread, from a {@link Context}.
 *
 * <p>Adding a column is one entry in {@link #FACTORIES} (a fabric view such as the aggregation columns' is a
 * {@link FabricColumn} over that view); {@link Table2Report#RATIOS} lists the ratios to report.
 */
public final class Columns {
    /**
     * What a column is built from: the rank's fabric (the thread is attached), the other rank's thread, the
     * {@code raw} ring, the control block of the shared file (for the {@code max-raw} exchange), and the term length
     * and directory of the {@code aeron-ipc} baseline.
     */
    public record Context(Fabric fabric, ThreadId peer, UnsafeBuffer rawRing, int aeronTermLength, UnsafeBuffer control,
                          Path aeronDirectory, long timeoutMillis) {
    }

    /** The {@code write} column without coalescing (transports without a mapped window differ; shm does not). */
    public static final String WRITE_EAGER = "write-eager";

    /** The {@code write} column sending one lambda object over and over: no allocation by the caller per call. */
    public static final String WRITE_REUSED = "write-reused";

    private static final Map<String, Function<Context, Column>> FACTORIES = new LinkedHashMap<>();

    static {
        FACTORIES.put("send", ctx -> new FabricColumn("send", ctx.fabric(), ctx.peer(), true));
        FACTORIES.put("write", ctx -> new FabricColumn("write", ctx.fabric(), ctx.peer(), false));
        // `write` with coalescing off: one WRITE per call however far the device is behind (Seriema's `write`).
        FACTORIES.put(WRITE_EAGER, ctx -> new FabricColumn(WRITE_EAGER, withoutCoalescing(ctx.fabric()), ctx.peer(),
                false));
        FACTORIES.put(WRITE_REUSED, ctx -> new FabricColumn(WRITE_REUSED, ctx.fabric(), ctx.peer(), false, true));
        // Seriema's RDMAAggregator modes: each view has its own messengers, flushed at the end of every measurement.
        FACTORIES.put("trad", ctx -> new FabricColumn("trad",
                Aggregation.traditional(ctx.fabric(), AggregationConfig.traditional()), ctx.peer(), false));
        FACTORIES.put("ovfl", ctx -> new FabricColumn("ovfl",
                Aggregation.overflow(ctx.fabric(), AggregationConfig.overflow()), ctx.peer(), false));
        FACTORIES.put("raw", ctx -> new RawRingColumn(ctx.rawRing(), ctx.timeoutMillis()));
        FACTORIES.put(AeronIpcColumn.NAME, ctx -> new AeronIpcColumn(ctx.fabric().rank() == 0, ctx.aeronDirectory(),
                ctx.aeronTermLength(), ctx.timeoutMillis()));
        FACTORIES.put(LinkWriteColumn.NAME, ctx -> new LinkWriteColumn(ctx.fabric(), ctx.control(), ctx.timeoutMillis()));
        // Not among the defaults: it needs libucx (scripts/install-ucx.sh), which the README's test command does not.
        FACTORIES.put(UcxColumn.NAME, ctx -> new UcxColumn(ctx.fabric().rank() == 0, ctx.control(),
                ctx.rawRing().capacity() - RingBufferDescriptor.TRAILER_LENGTH, ctx.timeoutMillis()));
    }

    private Columns() {
    }

    private static Fabric withoutCoalescing(Fabric fabric) {
        return ChannelViews.of(fabric).view(new ChannelFactory() {
            @Override
            public MessengerConfig messengerConfig(MessengerConfig jobDefault) {
                return jobDefault.withCoalescing(false);
            }

            @Override
            public RecordChannel wrap(Messenger messenger) {
                return messenger;
            }
        });
    }

    /** Every column name this build knows, in table order. */
    public static List<String> known() {
        return List.copyOf(FACTORIES.keySet());
    }

    /**
     * The columns a run measures by default over {@code transport}: the calls' columns and the baseline that moves
     * the same bytes through that medium ({@code raw}: an Agrona ring in shared memory, and {@code aeron-ipc}:
     * Aeron's IPC; {@code max-raw}: one
     * {@code Link.write} per message, e.g. one RDMA WRITE). Over RDMA {@code write-eager} shows {@code write} without
     * coalescing. Both show {@code write-reused}: {@code write}
     * without the caller's lambda allocation per call.
     */
    public static List<String> defaults(String transport) {
        return transport.equals("shm") ? List.of("send", "write", WRITE_REUSED, "trad", "ovfl", "raw",
                AeronIpcColumn.NAME)
                : List.of("send", "write", WRITE_REUSED, WRITE_EAGER, "trad", "ovfl", LinkWriteColumn.NAME);
    }

    /** The column named {@code name}, built on the calling (attached) thread. */
    public static Column create(String name, Context context) {
        Function<Context, Column> factory = FACTORIES.get(name);
        if (factory == null) {
            throw new IllegalArgumentException("unknown column '" + name + "', known: " + known());
        }
        return factory.apply(context);
    }
}
