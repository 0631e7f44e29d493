package io.fabricrpc.benchmarks.table2;

import io.fabricrpc.aggregation.Aggregation;
import io.fabricrpc.aggregation.AggregationConfig;
import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.benchmarks.CpuAffinity;
import io.fabricrpc.api.JobConfig;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.api.MessengerConfig;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * The CPU cost of one call, sender and receiver apart, with nothing crossing a core: one worker thread of a
 * one-process job calls itself in batches through the shared-memory transport ({@code write}, {@code trad},
 * {@code ovfl}, as in Table 2), then runs the batch with {@code processCalls()}. The send phase is the sender's
 * work per call, the run phase the receiver's, without the cache-line transfers and placement swings that dominate
 * Table 2 on these machines. Columns alternate batch by batch, rotating which goes first; the report gives medians over
 * rounds and the medians of the per-round ratios against {@code write}. A tool for comparing code paths, not a
 * throughput figure.
 */
@Command(name = "call-cost", mixinStandardHelpOptions = true,
        description = "Per-call CPU cost of write, trad and ovfl: one thread calls itself, send and run phases timed apart.")
public final class CallCostBenchmark implements Callable<Integer> {
    @Option(names = "--rounds", description = "Measured rounds (default ${DEFAULT-VALUE}).")
    int rounds = 15;
    @Option(names = "--batches", description = "Batches per column, size and round (default ${DEFAULT-VALUE}).")
    int batches = 100;
    @Option(names = "--calls", description = "Calls per batch (default ${DEFAULT-VALUE}).")
    int calls = 1000;
    @Option(names = "--warmup", description = "Warm-up batches per column and size (default ${DEFAULT-VALUE}).")
    int warmup = 3000;
    @Option(names = "--sizes", split = ",", description = "Payload sizes, each 8, 64 or 256 (default 8,64,256).")
    int[] sizes = Payloads.SIZES;
    @Option(names = "--columns", split = ",", description = "Columns (default write,trad,ovfl).")
    List<String> columns = List.of("write", "trad", "ovfl");
    @Option(names = "--pin", description = "CPU to pin the thread to, or -1 (default ${DEFAULT-VALUE}).")
    int pin = 0;
    @Option(names = "--output", description = "Report file (default: standard output only).")
    Path output;
    @Option(names = "--note", description = "A line for the report.")
    String note = "";

    /** How long a batch may take to run before the benchmark gives up on it (a call lost, or stuck). */
    private static final long RUN_TIMEOUT_NANOS = 30_000_000_000L;

    public static void main(String[] args) {
        System.exit(new CommandLine(new CallCostBenchmark()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        for (int size : sizes) {
            Payloads.checkedLongs(size);
        }
        // A batch must fit the messenger's chunks (16 x 64 KiB by default), or the sender would run calls itself.
        MessengerConfig messenger = MessengerConfig.defaults().withChunks(1 << 20, 2, 16);
        JobConfig job = JobConfig.builder().rank(0).size(1).threadsPerProcess(1).coordinator("127.0.0.1", freePort())
                .jobSecret(HexFormat.of().formatHex(SecureRandom.getSeed(16))).joinTimeout(Duration.ofSeconds(30))
                .build();
        FabricConfig config = FabricConfig.of(job, Payloads.registry()).withMessenger(messenger);
        Map<String, long[][]> send = new LinkedHashMap<>();
        Map<String, long[][]> run = new LinkedHashMap<>();
        Throwable[] failure = new Throwable[1];
        try (Fabric fabric = Fabric.join(config)) {
            Thread worker = Thread.ofPlatform().name("call-cost").start(() -> {
                try {
                    fabric.attach(0);
                    if (pin >= 0) {
                        CpuAffinity.pinCurrentThread(pin);
                    }
                    measure(fabric, send, run);
                } catch (Throwable t) {
                    failure[0] = t;
                }
            });
            worker.join();
        }
        if (failure[0] != null) {
            failure[0].printStackTrace();
            return 1;
        }
        String report = report(send, run);
        System.out.print(report);
        if (output != null) {
            Files.createDirectories(output.toAbsolutePath().getParent());
            Files.writeString(output, report);
        }
        return 0;
    }

    private void measure(Fabric fabric, Map<String, long[][]> send, Map<String, long[][]> run) {
        ThreadId self = fabric.self();
        List<Fabric> fabrics = new ArrayList<>();
        for (String column : columns) {
            fabrics.add(switch (column) {
                case "write" -> fabric;
                case "trad" -> Aggregation.traditional(fabric, AggregationConfig.traditional());
                case "ovfl" -> Aggregation.overflow(fabric, AggregationConfig.overflow());
                default -> throw new IllegalArgumentException("unknown column " + column + " (write, trad, ovfl)");
            });
            send.put(column, new long[sizes.length][rounds]);
            run.put(column, new long[sizes.length][rounds]);
        }
        long[] times = new long[2];
        for (int c = 0; c < fabrics.size(); c++) {
            for (int s = 0; s < sizes.length; s++) {
                for (int b = 0; b < warmup; b++) {
                    batch(fabrics.get(c), self, sizes[s], times);
                }
            }
        }
        for (int round = 0; round < rounds; round++) {
            for (int s = 0; s < sizes.length; s++) {
                for (int c = 0; c < fabrics.size(); c++) {
                    int column = (c + round) % fabrics.size();
                    times[0] = 0;
                    times[1] = 0;
                    for (int b = 0; b < batches; b++) {
                        batch(fabrics.get(column), self, sizes[s], times);
                    }
                    send.get(columns.get(column))[s][round] = times[0];
                    run.get(columns.get(column))[s][round] = times[1];
                }
            }
        }
    }

    /** One batch: {@code calls} calls, then flush and run them all; adds the two phases' nanoseconds to times. */
    private void batch(Fabric fabric, ThreadId self, int size, long[] times) {
        long expected = Payloads.Sink.count + calls;
        long start = System.nanoTime();
        switch (size) {
            case 8 -> send8(fabric, self);
            case 64 -> send64(fabric, self);
            default -> send256(fabric, self);
        }
        long sent = System.nanoTime();
        fabric.flush();
        while (Payloads.Sink.count < expected) {
            if (fabric.processCalls() == 0 && System.nanoTime() - sent > RUN_TIMEOUT_NANOS) {
                throw new IllegalStateException("a batch of " + calls + " calls of " + size + " B: " + (expected
                        - Payloads.Sink.count) + " had not run after " + RUN_TIMEOUT_NANOS / 1_000_000 + " ms");
            }
        }
        long ran = System.nanoTime();
        times[0] += sent - start;
        times[1] += ran - sent;
    }

    // One method per size, as in FabricColumn: each loop is its own compilation, with one lambda class per call site.

    private void send8(Fabric fabric, ThreadId self) {
        for (int i = 0; i < calls; i++) {
            check(fabric.call(self, Payloads.capture1(i)));
        }
    }

    private void send64(Fabric fabric, ThreadId self) {
        for (int i = 0; i < calls; i++) {
            check(fabric.call(self, Payloads.capture8(i)));
        }
    }

    private void send256(Fabric fabric, ThreadId self) {
        for (int i = 0; i < calls; i++) {
            check(fabric.call(self, Payloads.capture32(i)));
        }
    }

    private static void check(boolean accepted) {
        if (!accepted) {
            throw new IllegalStateException("a call was refused: the batch does not fit the messenger's chunks");
        }
    }

    private String report(Map<String, long[][]> send, Map<String, long[][]> run) {
        double perRound = (double) batches * calls;
        StringBuilder out = new StringBuilder();
        out.append("# Per-call CPU cost, one thread calling itself (").append(rounds).append(" rounds x ")
                .append(batches).append(" batches x ").append(calls).append(" calls per column and size)\n\n");
        if (!note.isEmpty()) {
            out.append(note).append("\n\n");
        }
        out.append("ns per call, median over rounds (send / run / total); ratios: median of per-round ratios of the"
                + " totals against write\n\n| size (B) |");
        for (String column : columns) {
            out.append(' ').append(column).append(" |");
        }
        out.append(" ratios |\n|---:|");
        out.append("---|".repeat(columns.size())).append("---|\n");
        for (int s = 0; s < sizes.length; s++) {
            out.append("| ").append(sizes[s]).append(" |");
            for (String column : columns) {
                double[] sends = perCall(send.get(column)[s], perRound);
                double[] runs = perCall(run.get(column)[s], perRound);
                double[] totals = new double[rounds];
                for (int r = 0; r < rounds; r++) {
                    totals[r] = sends[r] + runs[r];
                }
                out.append(String.format(" %.1f / %.1f / %.1f |", median(sends), median(runs), median(totals)));
            }
            StringBuilder ratios = new StringBuilder();
            if (columns.contains("write")) {
                long[] writeSend = send.get("write")[s];
                long[] writeRun = run.get("write")[s];
                for (String column : columns) {
                    if (column.equals("write")) {
                        continue;
                    }
                    double[] ratio = new double[rounds];
                    for (int r = 0; r < rounds; r++) {
                        // calls/s ratio: write's time over the column's
                        ratio[r] = (double) (writeSend[r] + writeRun[r]) / (send.get(column)[s][r] + run.get(column)[s][r]);
                    }
                    ratios.append(String.format(" %s/write %.2fx (%.2fx .. %.2fx);", column, median(ratio),
                            Arrays.stream(ratio).min().orElse(0), Arrays.stream(ratio).max().orElse(0)));
                }
            }
            out.append(ratios).append(" |\n");
        }
        return out.toString();
    }

    private static double[] perCall(long[] nanos, double calls) {
        return Arrays.stream(nanos).mapToDouble(n -> n / calls).toArray();
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
