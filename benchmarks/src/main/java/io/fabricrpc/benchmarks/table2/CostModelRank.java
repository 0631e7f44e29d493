package io.fabricrpc.benchmarks.table2;

import io.fabricrpc.aggregation.Aggregation;
import io.fabricrpc.aggregation.AggregationConfig;
import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.RemoteRunnable;
import io.fabricrpc.api.SerializationRegistry;
import io.fabricrpc.api.ThreadId;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * One rank of {@link CostModelBenchmark} (2 processes x 1 thread, transport {@code counted}): rank 0 sends batches of
 * calls to rank 1, which runs each batch and acknowledges it with one call back. Per round, each rank prints one
 * {@code COST} line: calls, its thread's CPU nanoseconds in its working phase (the sender's send loop and flush; the
 * receiver's {@code processCalls} rounds that ran calls) and this process's verb counts ({@link CountingTransport}).
 */
@Command(name = "cost-model-rank", mixinStandardHelpOptions = true)
public final class CostModelRank implements Callable<Integer> {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static final long WAIT_NANOS = 60_000_000_000L;

    @Option(names = "--columns", split = ",")
    List<String> columns = List.of("write", "trad", "ovfl");
    @Option(names = "--sizes", split = ",")
    int[] sizes = Payloads.SIZES;
    @Option(names = "--rounds")
    int rounds = 5;
    @Option(names = "--batches")
    int batches = 10;
    @Option(names = "--calls")
    int calls = 10_000;
    @Option(names = "--warmup")
    int warmup = 20;

    /** Batches acknowledged by the receiver (rank 0's worker thread only). */
    static long acked;

    public static void main(String[] args) {
        System.exit(new CommandLine(new CostModelRank()).execute(args));
    }

    static SerializationRegistry registry() {
        return SerializationRegistry.builder().allowCapturingClass(Payloads.class)
                .allowCapturingClass(CostModelRank.class).build();
    }

    @Override
    public Integer call() throws Exception {
        FabricConfig config = FabricConfig.fromEnvironment(registry()).withMessenger(
                Table2Rank.messengerConfig(1 << 20, 2, 16)); // a batch fits the chunks: no sender waits for room
        Throwable[] failure = new Throwable[1];
        try (Fabric fabric = Fabric.join(config)) {
            Thread worker = Thread.ofPlatform().name("cost-model").start(() -> {
                try {
                    fabric.attach(0);
                    run(fabric);
                    fabric.barrier(); // neither leaves while the other still runs or waits for an acknowledgement
                } catch (Throwable t) {
                    failure[0] = t;
                }
            });
            worker.join();
        }
        if (failure[0] != null) {
            failure[0].printStackTrace(System.out);
            System.out.println("rank failed: " + failure[0]);
            return 1;
        }
        return 0;
    }

    private void run(Fabric fabric) {
        boolean sender = fabric.rank() == 0;
        ThreadId peer = new ThreadId(1 - fabric.rank(), 0);
        long batch = 0;
        for (String name : columns) {
            Fabric view = switch (name) {
                case "write" -> fabric;
                case "trad" -> Aggregation.traditional(fabric, AggregationConfig.traditional());
                case "ovfl" -> Aggregation.overflow(fabric, AggregationConfig.overflow());
                default -> throw new IllegalArgumentException("unknown column " + name + " (write, trad, ovfl)");
            };
            for (int size : sizes) {
                for (int round = -1; round < rounds; round++) { // round -1: the warm-up
                    fabric.barrier();
                    long[] before = CountingTransport.Counts.snapshot();
                    long cpu = 0;
                    int n = round < 0 ? warmup : batches;
                    for (int b = 0; b < n; b++) {
                        batch++;
                        cpu += sender ? sendBatch(fabric, view, peer, size, batch) : runBatch(fabric, view, peer, batch);
                    }
                    if (round >= 0) {
                        long[] after = CountingTransport.Counts.snapshot();
                        StringBuilder line = new StringBuilder("COST side=").append(sender ? "sender" : "receiver")
                                .append(" column=").append(name).append(" size=").append(size).append(" round=")
                                .append(round).append(" calls=").append((long) n * calls).append(" cpuNs=").append(cpu);
                        String[] keys = {"posts", "wrs", "bytes", "checks", "innerWrs", "innerSignaled", "innerPolls"};
                        for (int k = 0; k < keys.length; k++) {
                            line.append(' ').append(keys[k]).append('=').append(after[k] - before[k]);
                        }
                        System.out.println(line);
                    }
                }
            }
        }
    }

    /** Sends one batch and waits for its acknowledgement; returns the send phase's CPU nanoseconds. */
    private long sendBatch(Fabric fabric, Fabric view, ThreadId peer, int size, long batch) {
        long start = THREADS.getCurrentThreadCpuTime();
        long first = batch * calls;
        switch (size) {
            case 8 -> send8(view, peer, first);
            case 64 -> send64(view, peer, first);
            default -> send256(view, peer, first);
        }
        view.flush();
        long cpu = THREADS.getCurrentThreadCpuTime() - start;
        long deadline = System.nanoTime() + WAIT_NANOS;
        while (acked < batch) {
            if (fabric.processCalls() == 0 && System.nanoTime() > deadline) {
                throw new IllegalStateException("batch " + batch + " of " + calls + " calls: no acknowledgement in "
                        + WAIT_NANOS / 1_000_000 + " ms (acknowledged " + acked + ")");
            }
        }
        return cpu;
    }

    /** Runs one batch, then acknowledges it; returns the CPU nanoseconds of the rounds that ran calls. */
    private long runBatch(Fabric fabric, Fabric view, ThreadId peer, long batch) {
        // Cumulative: the barrier before a round runs calls too, so the count at entry may already include some.
        long expected = batch * calls;
        long cpu = 0;
        long deadline = System.nanoTime() + WAIT_NANOS;
        while (Payloads.Sink.count < expected) {
            long start = THREADS.getCurrentThreadCpuTime();
            if (view.processCalls() > 0) {
                cpu += THREADS.getCurrentThreadCpuTime() - start;
            } else if (System.nanoTime() > deadline) {
                throw new IllegalStateException("batch " + batch + ": " + (expected - Payloads.Sink.count) + " of "
                        + calls + " calls had not arrived in " + WAIT_NANOS / 1_000_000 + " ms");
            }
        }
        fabric.call(peer, ack(batch));
        fabric.flush();
        return cpu;
    }

    private static RemoteRunnable ack(long batch) {
        return () -> acked = batch;
    }

    // One method per size, as in FabricColumn: each loop is its own compilation, with one lambda class per call site.

    private void send8(Fabric fabric, ThreadId peer, long first) {
        for (int i = 0; i < calls; i++) {
            check(fabric.call(peer, Payloads.capture1(first + i)));
        }
    }

    private void send64(Fabric fabric, ThreadId peer, long first) {
        for (int i = 0; i < calls; i++) {
            check(fabric.call(peer, Payloads.capture8(first + i)));
        }
    }

    private void send256(Fabric fabric, ThreadId peer, long first) {
        for (int i = 0; i < calls; i++) {
            check(fabric.call(peer, Payloads.capture32(first + i)));
        }
    }

    private static void check(boolean accepted) {
        if (!accepted) {
            throw new IllegalStateException("a call was refused: a batch does not fit the messenger's chunks");
        }
    }
}
