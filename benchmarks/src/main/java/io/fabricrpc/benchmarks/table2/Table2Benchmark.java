package io.fabricrpc.benchmarks.table2;

import io.fabricrpc.benchmarks.CpuAffinity;
import io.fabricrpc.benchmarks.Report;
import io.fabricrpc.benchmarks.SharedRingFile;
import io.fabricrpc.fabric.LocalLauncher;
import io.fabricrpc.messaging.MessengerConfig;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * Seriema's Table 2 (§5.2) on shared memory: throughput of calls from one sender thread in one JVM to one
 * receiver thread in another, per column ({@code send}: {@code Fabric.callSend}; {@code write}: {@code Fabric.call}
 * through messengers; {@code trad} and {@code ovfl}: {@code call} through the traditional and the overflow
 * aggregation views; {@code raw}: an Agrona ring moving the same bytes without serialization or invocation; see
 * {@link Columns}) and per payload size (8, 64, 256 bytes of captured longs).
 *
 * <p>Starts a 2-process job ({@link Table2Rank}) with the fabric's {@link LocalLauncher}, collects rank 0's
 * results, writes the Markdown report and a PNG chart next to it, and prints the summary. Columns are
 * interleaved within every round (rotating which goes first); ratios are per round, then the median.
 */
@Command(name = "table2", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Seriema Table 2 on shared memory: call throughput per column and payload size.")
public final class Table2Benchmark implements Callable<Integer> {
    @Option(names = "--rounds", defaultValue = "5", description = "Measured rounds (default ${DEFAULT-VALUE}).")
    int rounds;
    @Option(names = "--seconds", defaultValue = "1", description = "Seconds of sending per column, size and round (default ${DEFAULT-VALUE}).")
    double seconds;
    @Option(names = "--slice", defaultValue = "0.1", description = "Each column's seconds are cut into slices of this length, the columns alternating slice by slice (rotating which goes first), so that bursts of load from other processes fall on every column alike (default ${DEFAULT-VALUE}).")
    double slice;
    @Option(names = "--warmup", defaultValue = "0.6", description = "Warm-up seconds per column and size, before the rounds (default ${DEFAULT-VALUE}).")
    double warmup;
    @Option(names = "--sizes", defaultValue = "8,64,256", split = ",", description = "Payload sizes, each 8, 64 or 256 (default ${DEFAULT-VALUE}).")
    List<Integer> sizes;
    @Option(names = "--columns", split = ",", description = "Columns to measure (default: all this build knows, ${COMPLETION-CANDIDATES}).",
            completionCandidates = KnownColumns.class)
    List<String> columns;
    @Option(names = "--pin", defaultValue = "auto", description = "SENDER_CPU,RECEIVER_CPU for the two measuring threads, none, or auto (0,1 with two CPUs or more; default ${DEFAULT-VALUE}).")
    String pin;
    @Option(names = "--chunk-size", defaultValue = "65536", description = "Messenger chunk size in bytes (default ${DEFAULT-VALUE}).")
    int chunkSize;
    @Option(names = "--c", defaultValue = "2", description = "Messenger chunks per allocation (default ${DEFAULT-VALUE}).")
    int c;
    @Option(names = "--cmax", defaultValue = "16", description = "Messenger maximum chunks (default ${DEFAULT-VALUE}).")
    int cMax;
    @Option(names = "--ring-capacity", defaultValue = "0", description = "raw ring capacity in bytes, a power of two (default 0: cmax x chunk-size rounded up to a power of two, the messenger's memory).")
    int ringCapacity;
    @Option(names = "--timeout-ms", defaultValue = "60000", description = "Longest wait for the other rank (default ${DEFAULT-VALUE}).")
    long timeoutMillis;
    @Option(names = "--shm-dir", defaultValue = "/dev/shm", description = "Base directory of the shared-memory files (default ${DEFAULT-VALUE}).")
    Path shmDir;
    @Option(names = "--output", defaultValue = "benchmarks/results/table2-shm.md", description = "Markdown report, overwritten; the PNG goes next to it with the same name (default ${DEFAULT-VALUE}).")
    Path output;
    @Option(names = "--note", description = "A remark to put in the report (e.g. what else loaded the machine).")
    String note;
    @Option(names = "--quiet", description = "Do not forward the ranks' output.")
    boolean quiet;

    private Table2Report report;
    private int senderCpu = -1;
    private int receiverCpu = -1;

    /** Picocli completion candidates: the column names. */
    static final class KnownColumns extends ArrayList<String> {
        KnownColumns() {
            super(Columns.known());
        }
    }

    public static void main(String[] args) {
        System.exit(commandLine(new Table2Benchmark()).execute(args));
    }

    static CommandLine commandLine(Table2Benchmark benchmark) {
        return new CommandLine(benchmark);
    }

    /** The report of the last {@link #call()}, or null. */
    Table2Report report() {
        return report;
    }

    @Override
    public Integer call() throws IOException {
        validate();
        Report.Machine machine = Report.Machine.describe();
        double loadBefore = Report.Machine.loadAverage();
        int capacity = ringCapacity;
        List<String> rankOutput;
        try (SharedRingFile shared = SharedRingFile.create(shmDir, Table2FileDescriptor.fileLength(capacity))) {
            rankOutput = runJob(shared.path(), capacity);
        }
        List<Table2Result> results = new ArrayList<>();
        Map<Integer, Double> lambdaBytes = new HashMap<>();
        for (String line : rankOutput) {
            if (line.startsWith(Table2Rank.RESULT)) {
                results.add(Table2Result.parse(line));
            } else if (line.startsWith(Table2Rank.LAMBDA)) {
                String[] f = line.substring(Table2Rank.LAMBDA.length()).trim().split("\\s+");
                lambdaBytes.put(Integer.parseInt(f[0]), Double.parseDouble(f[1]));
            }
        }
        int expected = rounds * sizes.size() * columns.size();
        if (results.size() != expected) {
            throw new IllegalStateException("rank 0 reported " + results.size() + " measurements, expected " + expected);
        }
        Path parent = output.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        String name = output.getFileName().toString();
        Path png = output.resolveSibling(name.endsWith(".md") ? name.substring(0, name.length() - 3) + ".png"
                : name + ".png");
        report = new Table2Report(machine, loadBefore, Report.Machine.loadAverage(), parameters(capacity),
                memory(capacity), note, List.copyOf(columns), List.copyOf(sizes), results, lambdaBytes,
                png.getFileName().toString());
        Table2Chart.write(report, "Seriema Table 2 on shared memory (" + machine.date() + ")", png);
        Files.writeString(output, report.markdown());
        System.out.println(report.summary());
        System.out.println("report written to " + output.toAbsolutePath() + ", chart to " + png.toAbsolutePath());
        return 0;
    }

    private List<String> runJob(Path file, int capacity) {
        List<String> jvm = new ArrayList<>(LocalLauncher.inheritedJvmFlags());
        jvm.add("-Xmx512m");
        jvm.add("-Dfabric.transport=shm");
        jvm.add("-Dshm.dir=" + shmDir);
        List<String> args = List.of("--columns", String.join(",", columns),
                "--sizes", String.join(",", sizes.stream().map(String::valueOf).toList()),
                "--rounds", Integer.toString(rounds), "--seconds", Double.toString(seconds),
                "--slice", Double.toString(slice), "--warmup", Double.toString(warmup), "--file", file.toString(),
                "--ring-capacity", Integer.toString(capacity), "--chunk-size", Integer.toString(chunkSize),
                "--c", Integer.toString(c), "--cmax", Integer.toString(cMax),
                "--sender-cpu", Integer.toString(senderCpu), "--receiver-cpu", Integer.toString(receiverCpu),
                "--timeout-ms", Long.toString(timeoutMillis));
        // Generous bound: every measurement plus the drains, the warm-up, JVM start and shutdown.
        double measuredSeconds = (rounds * seconds + warmup) * sizes.size() * columns.size();
        Duration bound = Duration.ofSeconds((long) (2 * measuredSeconds) + 120 + 2 * timeoutMillis / 1000);
        try (LocalLauncher job = LocalLauncher.builder(Table2Rank.class).processes(2).threadsPerProcess(1)
                .jvmArgs(jvm.toArray(String[]::new)).args(args.toArray(String[]::new)).forwardOutput(!quiet).start()) {
            job.awaitAll(bound);
            return job.process(0).output();
        }
    }

    private void validate() {
        List<String> problems = new ArrayList<>();
        if (columns == null || columns.isEmpty()) {
            columns = Columns.known();
        }
        for (String column : columns) {
            if (!Columns.known().contains(column)) {
                problems.add("unknown column '" + column + "', known: " + Columns.known());
            }
        }
        if (columns.stream().distinct().count() != columns.size()) {
            problems.add("--columns names a column twice: " + columns);
        }
        for (int size : sizes) {
            if (!Payloads.isSupported(size)) {
                problems.add("--sizes: " + size + " is not one of 8, 64, 256");
            }
        }
        if (rounds < 1 || rounds > 99) {
            problems.add("--rounds must be in [1, 99], got " + rounds);
        }
        if (!(seconds > 0 && seconds <= 30)) {
            problems.add("--seconds must be in (0, 30], got " + seconds);
        }
        if (!(slice > 0 && slice <= seconds)) {
            problems.add("--slice must be in (0, --seconds], got " + slice);
        }
        if (!(warmup >= 0 && warmup <= 60)) {
            problems.add("--warmup must be in [0, 60], got " + warmup);
        }
        try {
            MessengerConfig messenger = Table2Rank.messengerConfig(chunkSize, c, cMax);
            if (ringCapacity == 0) {
                long memory = (long) messenger.cMax() * messenger.chunkSize();
                ringCapacity = (int) Math.min(1 << 30, Long.highestOneBit(memory - 1) << 1);
            }
        } catch (IllegalArgumentException e) {
            problems.add("messenger settings: " + e.getMessage());
        }
        if (ringCapacity < 4096 || Integer.bitCount(ringCapacity) != 1) {
            problems.add("--ring-capacity must be a power of two >= 4096, got " + ringCapacity);
        }
        if (timeoutMillis < 1000) {
            problems.add("--timeout-ms must be >= 1000, got " + timeoutMillis);
        }
        try {
            int[] cpus = CpuAffinity.parsePair("--pin", "SENDER_CPU,RECEIVER_CPU", pin);
            if (cpus != null) {
                senderCpu = cpus[0];
                receiverCpu = cpus[1];
            }
        } catch (IllegalArgumentException e) {
            problems.add(e.getMessage());
        }
        if (!problems.isEmpty()) {
            throw new CommandLine.ParameterException(new CommandLine(this), String.join("; ", problems));
        }
    }

    private String parameters(int capacity) {
        return String.format(Locale.ROOT, "%d rounds x %s s of sending per column and size, in slices of %s s (each slice"
                        + " timed until the receiver has run every call), warm-up %s s per column and size; columns %s,"
                        + " alternating slice by slice with a rotating first column;"
                        + " payload sizes %s B = lambdas capturing 8, 64 or 256 bytes of longs (1, 8 or 32 `long`"
                        + " captures; the body adds them and counts the call); `raw` carries the same longs in an Agrona"
                        + " `OneToOneRingBuffer` of %d KiB (written in place with tryClaim/commit, read %d messages per"
                        + " poll, the receiver sums each message's longs); messengers: chunkSize %d, c %d, cMax %d, policy"
                        + " RETRY; 2 processes x 1 worker thread over the shared-memory transport; %s; waiting sides use"
                        + " Agrona BackoffIdleStrategy(64, 16, 1 us, 100 us) (the messengers' own)",
                rounds, trim(seconds), trim(slice), trim(warmup), columns, sizes, capacity / 1024, RawRingColumn.READ_LIMIT, chunkSize,
                c, cMax, senderCpu < 0 ? "threads not pinned"
                        : "sender thread pinned to CPU " + senderCpu + ", receiver thread to CPU " + receiverCpu);
    }

    private String memory(int capacity) {
        long messenger = (long) cMax * chunkSize;
        return String.format(Locale.ROOT, "- Per messenger (one sender thread to one destination thread, `write`): at"
                        + " most cMax x chunkSize = %d x %d B = **%d KiB** of chunks at the receiver (allocated %d at a"
                        + " time on demand), plus one %d KiB staging chunk at the sender.%n"
                        + "- `send`: no per-pair memory; each worker has a fixed 1 MiB queue the service thread routes"
                        + " into (`FabricRuntime.SEND_QUEUE_BYTES`), behind the transport's per-endpoint message"
                        + " queue.%n"
                        + "- `trad`, `ovfl`: each aggregation view has messengers of its own (the same bound again per"
                        + " sender and destination). `trad` batches into the messenger's staging chunk and sends 4 KiB"
                        + " batches (`AggregationConfig.traditional()`); `ovfl` sends directly while the chunks have"
                        + " room and keeps what exceeds in a region of at most 16 MiB (`AggregationConfig.overflow()`).%n"
                        + "- `raw`: one ring of %d KiB (+ %d B trailer), the same budget as one messenger.",
                cMax, chunkSize, messenger / 1024, c, chunkSize / 1024, capacity / 1024,
                org.agrona.concurrent.ringbuffer.RingBufferDescriptor.TRAILER_LENGTH);
    }

    private static String trim(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value);
    }
}
