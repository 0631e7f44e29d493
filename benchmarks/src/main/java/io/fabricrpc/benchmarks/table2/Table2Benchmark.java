package io.fabricrpc.benchmarks.table2;

import io.fabricrpc.benchmarks.CpuAffinity;
import io.fabricrpc.benchmarks.Report;
import io.fabricrpc.benchmarks.SharedRingFile;
import io.fabricrpc.fabric.LocalLauncher;
import io.fabricrpc.api.MessengerConfig;
import org.agrona.concurrent.UnsafeBuffer;
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
    /**
     * Every column gets the same memory per stream, so that none wins by buffering longer stalls of the other side
     * (on these machines a vCPU can stall for milliseconds): shm defaults to what an Aeron user runs, Aeron's IPC
     * window at its default term (half of 64 MiB).
     */
    static final int DEFAULT_SHM_MEMORY_PER_STREAM = AeronIpcColumn.DEFAULT_TERM_LENGTH / 2;
    /** rdma has no Aeron column: the library's default messenger. */
    static final int DEFAULT_RDMA_MEMORY_PER_STREAM =
            MessengerConfig.defaults().cMax() * MessengerConfig.defaults().chunkSize();
    static final int MIN_MEMORY_PER_STREAM = AeronIpcColumn.MIN_TERM_LENGTH / 2;
    static final int MAX_MEMORY_PER_STREAM = AeronIpcColumn.MAX_TERM_LENGTH / 2;

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
    @Option(names = "--memory-per-stream", defaultValue = "0", description = "Bytes each sender-receiver stream may"
            + " fill before the sender waits, the same for every column: the messenger's cMax x chunk-size, the raw"
            + " ring's capacity, Aeron's IPC window (half a term). A power of two (default 0: under shm, Aeron's own"
            + " IPC window, 32 MiB; under rdma, the library's default messenger, 16 x 64 KiB).")
    int memoryPerStream;
    @Option(names = "--chunk-size", defaultValue = "0", description = "Messenger chunk size in bytes (default 0:"
            + " --memory-per-stream / cmax).")
    int chunkSize;
    @Option(names = "--c", defaultValue = "2", description = "Messenger chunks per allocation (default ${DEFAULT-VALUE}).")
    int c;
    @Option(names = "--cmax", defaultValue = "16", description = "Messenger maximum chunks (default ${DEFAULT-VALUE}).")
    int cMax;
    @Option(names = "--ring-capacity", defaultValue = "0", description = "raw ring capacity in bytes, a power of two (default 0: --memory-per-stream).")
    int ringCapacity;
    @Option(names = "--aeron-term-length", defaultValue = "0", description = "aeron-ipc term length in bytes, a power of"
            + " two from 65536 (default 0: 2 x --memory-per-stream, so that Aeron's window, half a term, is the"
            + " stream's memory; under shm by default that is Aeron's own IPC default, 64 MiB).")
    int aeronTermLength;
    @Option(names = "--timeout-ms", defaultValue = "60000", description = "Longest wait for the other rank (default ${DEFAULT-VALUE}).")
    long timeoutMillis;
    @Option(names = "--shm-dir", defaultValue = "/dev/shm", description = "Base directory of the shared-memory files (default ${DEFAULT-VALUE}).")
    Path shmDir;
    @Option(names = "--output", description = "Markdown report, overwritten; the PNG goes next to it with the same name (default benchmarks/results/table2-shm.md, or table2-rdma-<UTC date>.md under rdma).")
    Path output;
    @Option(names = "--note", description = "A remark to put in the report (e.g. what else loaded the machine).")
    String note;
    @Option(names = "--quiet", description = "Do not forward the ranks' output.")
    boolean quiet;
    @Option(names = "--transport", defaultValue = "shm", description = "shm or rdma: what the ranks' fabric runs over (default ${DEFAULT-VALUE}). rdma runs where an RDMA device is (the Soft-RoCE guest: scripts/run-table2-rdma-bench.sh).")
    String transport;
    @Option(names = "--bind-address", description = "rdma: the IPv4 address of the RDMA interface (rdma.bindAddress; default: the transport's own choice).")
    String bindAddress;
    @Option(names = "--rank-jvm-option", description = "An extra JVM option of the ranks and the baselines' JVMs (repeatable), e.g. -XX:TieredStopAtLevel=1 in the emulated guest.")
    List<String> rankJvmOptions = new ArrayList<>();
    @Option(names = "--baselines", split = ",", description = "rdma: external baselines run between the rounds: perftest (ib_write_bw), darpc, or none (default: perftest,darpc).")
    List<String> baselines;
    @Option(names = "--device", defaultValue = "rxe0", description = "rdma: the device perftest uses (default ${DEFAULT-VALUE}).")
    String device;
    @Option(names = "--perftest-iterations", defaultValue = "20000", description = "ib_write_bw messages per run (-n; default ${DEFAULT-VALUE}).")
    int perftestIterations;
    @Option(names = "--perftest-sizes", defaultValue = "8,64,256,4096", split = ",", description = "ib_write_bw message sizes (default ${DEFAULT-VALUE}; 4096 is the bandwidth reference of trad).")
    List<Integer> perftestSizes;
    @Option(names = "--darpc-seconds", defaultValue = "0", description = "Seconds of DaRPC calls per size and round (default 0: --seconds).")
    double darpcSeconds;
    @Option(names = "--darpc-depth", defaultValue = "32", description = "DaRPC calls in flight on the client's stream (default ${DEFAULT-VALUE}).")
    int darpcDepth;
    @Option(names = "--darpc-inline", defaultValue = "256", description = "DaRPC max inline bytes of its QPs (default ${DEFAULT-VALUE}).")
    int darpcInline;
    @Option(names = "--darpc-warmup", defaultValue = "2", description = "DaRPC warm-up seconds per size, before the rounds (default ${DEFAULT-VALUE}).")
    double darpcWarmup;
    @Option(names = "--darpc-polling", description = "DaRPC server polls its CQ (busy) instead of waiting for CQ events.")
    boolean darpcPolling;
    @Option(names = "--context", description = "A line about the machine to put in the report's parameters (e.g. the host's load around a guest run).")
    String context;
    @Option(names = "--gate-timeout-ms", defaultValue = "600000", description = "rdma: longest the ranks wait at a round gate while the baselines run (default ${DEFAULT-VALUE}).")
    long gateTimeoutMillis;

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
        // Scripts pass defaults first; a later option of the caller wins.
        return new CommandLine(benchmark).setOverwrittenOptionsAllowed(true);
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
        Path raw = Table2RawFile.besideReport(output);
        Path rawParent = raw.toAbsolutePath().getParent();
        if (rawParent != null) {
            Files.createDirectories(rawParent);
        }
        Table2RawFile.start(raw, "Table 2 raw results of " + output.getFileName() + ", " + machine.date() + " ("
                + transport + "; " + rounds + " rounds; columns " + columns + "; sizes " + sizes + ")\n"
                + "one line per measurement as soon as it is measured: round column size position calls nanos"
                + " senderBytes receiverBytes senderOtherBytes receiverOtherBytes senderCpuNanos receiverCpuNanos");
        JobOutcome outcome;
        List<Table2Result> results = new ArrayList<>();
        List<String> rawBaselineLines = new ArrayList<>();
        try (SharedRingFile shared = SharedRingFile.create(shmDir, Table2FileDescriptor.fileLength(capacity));
             RdmaBaselines external = baselines.isEmpty() ? null : new RdmaBaselines(baselineSettings())) {
            if (external != null) {
                external.start(timeoutMillis);
            }
            outcome = runJob(shared, capacity, external, results, raw);
            if (external != null) {
                rawBaselineLines.addAll(external.rawLines());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while the baselines ran", e);
        }
        Map<Integer, Double> lambdaBytes = new HashMap<>();
        Map<String, long[]> jit = new HashMap<>();
        for (String line : outcome.rank0Output()) {
            if (line.startsWith(Table2Rank.JIT)) {
                String[] f = line.substring(Table2Rank.JIT.length()).trim().split("\\s+");
                jit.put(f[0], new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])});
            } else if (line.startsWith(Table2Rank.RESULT)) {
                results.add(Table2Result.parse(line));
            } else if (line.startsWith(Table2Rank.LAMBDA)) {
                String[] f = line.substring(Table2Rank.LAMBDA.length()).trim().split("\\s+");
                lambdaBytes.put(Integer.parseInt(f[0]), Double.parseDouble(f[1]));
            }
        }
        int perRound = sizes.size() * columns.size();
        int complete = Table2RawFile.completeRounds(results, columns, perRound, rounds);
        String failureNote = "";
        if (outcome.failure() != null) {
            // A rank that died after measuring (a baseline's teardown): report every complete round it measured.
            if (complete == 0) {
                throw new IllegalStateException("the job failed before a round was complete (raw results so far: "
                        + raw + "):\n" + outcome.failure());
            }
            int kept = complete;
            results.removeIf(r -> r.round() >= kept);
            failureNote = String.format(Locale.ROOT, "A rank failed after %d of %d rounds were measured; the report has"
                    + " those rounds (raw results: `%s`). What the launcher saw:%n%n```%n%s%n```", complete, rounds,
                    raw.getFileName(), outcome.failure().strip());
            System.err.println("warning: " + failureNote);
        } else if (complete != rounds || results.stream().filter(r -> columns.contains(r.column())).count()
                != (long) rounds * perRound) {
            throw new IllegalStateException("rank 0 reported " + results.stream().filter(r -> columns.contains(
                    r.column())).count() + " measurements, expected " + (long) rounds * perRound);
        }
        List<String> shown = new ArrayList<>(columns);
        if (baselines.contains("perftest")) {
            shown.add(RdmaBaselines.IB_WRITE_BW);
        }
        if (baselines.contains("darpc")) {
            shown.add(RdmaBaselines.DARPC);
        }
        Path parent = output.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        String name = output.getFileName().toString();
        Path png = output.resolveSibling(name.endsWith(".md") ? name.substring(0, name.length() - 3) + ".png"
                : name + ".png");
        report = new Table2Report(machine, loadBefore, Report.Machine.loadAverage(), parameters(capacity) + jitText(jit),
                memory(capacity), joinNotes(note, failureNote), List.copyOf(shown), List.copyOf(sizes), results, lambdaBytes,
                png.getFileName().toString(), transport, baselineMarkdown(results, rawBaselineLines));
        Table2Chart.write(report, "Seriema Table 2 on " + report.medium() + " (" + machine.date() + ")", png);
        Files.writeString(output, report.markdown());
        System.out.println(report.summary());
        System.out.println("report written to " + output.toAbsolutePath() + ", chart to " + png.toAbsolutePath());
        return complete == rounds ? 0 : 1;
    }

    private static String joinNotes(String note, String failureNote) {
        if (failureNote.isEmpty()) {
            return note;
        }
        return note == null || note.isBlank() ? failureNote : note + "\n\n" + failureNote;
    }

    /**
     * Rank 0's output and, when a rank failed (exited non-zero, or the job timed out) after the job had started, the
     * launcher's account of it; null when every rank exited 0.
     */
    record JobOutcome(List<String> rank0Output, String failure) {
    }

    /**
     * JIT compilation time of each rank JVM up to the end of the warm-up and during the measured rounds: compiling
     * takes CPU from the rounds it overlaps, which matters where compiling is slow (C2 under TCG takes seconds).
     */
    private static String jitText(Map<String, long[]> jit) {
        long[] warm = jit.get(Table2Rank.JIT_WARMUP);
        long[] end = jit.get(Table2Rank.JIT_ROUNDS);
        if (warm == null || end == null || warm[0] < 0 || warm[1] < 0) {
            return "";
        }
        return String.format(Locale.ROOT, "; JIT compilation time (CompilationMXBean) up to the end of the warm-up:"
                + " rank 0 %,d ms, rank 1 %,d ms; during the measured rounds: rank 0 %,d ms, rank 1 %,d ms",
                warm[0], warm[1], end[0] - warm[0], end[1] - warm[1]);
    }

    private RdmaBaselines.Settings baselineSettings() {
        String host = bindAddress;
        if (host == null) {
            throw new CommandLine.ParameterException(new CommandLine(this), "--baselines need --bind-address (the"
                    + " address perftest and DaRPC connect to)");
        }
        List<String> jvm = new ArrayList<>(LocalLauncher.inheritedJvmFlags());
        jvm.addAll(rankJvmOptions);
        Path jar;
        try {
            jar = Path.of(Table2Benchmark.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException("cannot locate the benchmark's jar for the DaRPC JVMs", e);
        }
        return new RdmaBaselines.Settings(device, host, perftestIterations,
                baselines.contains("perftest") ? List.copyOf(perftestSizes) : List.of(), baselines.contains("darpc"),
                List.copyOf(sizes), darpcSeconds > 0 ? darpcSeconds : seconds, darpcDepth, darpcInline, darpcPolling,
                darpcWarmup, jvm, jar);
    }

    private JobOutcome runJob(SharedRingFile shared, int capacity, RdmaBaselines external,
                              List<Table2Result> baselineResults, Path raw) throws IOException, InterruptedException {
        Path file = shared.path();
        List<String> jvm = new ArrayList<>(LocalLauncher.inheritedJvmFlags());
        jvm.add("-Xmx512m");
        jvm.addAll(rankJvmOptions);
        jvm.add("-Dfabric.transport=" + transport);
        if (transport.equals("shm")) {
            jvm.add("-Dshm.dir=" + shmDir);
        } else if (bindAddress != null) {
            jvm.add("-Drdma.bindAddress=" + bindAddress);
        }
        long gate = external == null ? 0 : gateTimeoutMillis;
        List<String> args = List.of("--gate-timeout-ms", Long.toString(gate), "--columns", String.join(",", columns),
                "--sizes", String.join(",", sizes.stream().map(String::valueOf).toList()),
                "--rounds", Integer.toString(rounds), "--seconds", Double.toString(seconds),
                "--slice", Double.toString(slice), "--warmup", Double.toString(warmup), "--file", file.toString(),
                "--ring-capacity", Integer.toString(capacity), "--chunk-size", Integer.toString(chunkSize),
                "--c", Integer.toString(c), "--cmax", Integer.toString(cMax),
                "--sender-cpu", Integer.toString(senderCpu), "--receiver-cpu", Integer.toString(receiverCpu),
                "--timeout-ms", Long.toString(timeoutMillis), "--aeron-term-length", Integer.toString(aeronTermLength),
                "--raw-file", raw.toAbsolutePath().toString());
        // Generous bound: every measurement plus the drains, the warm-up, JVM start and shutdown.
        double measuredSeconds = (rounds * seconds + warmup) * sizes.size() * columns.size();
        Duration bound = Duration.ofSeconds((long) (2 * measuredSeconds) + 120 + 2 * timeoutMillis / 1000
                + rounds * gate / 1000);
        LocalLauncher.Builder builder = LocalLauncher.builder(Table2Rank.class).processes(2).threadsPerProcess(1)
                .jvmArgs(jvm.toArray(String[]::new)).args(args.toArray(String[]::new)).forwardOutput(!quiet);
        ucxEnvironment().forEach(builder::env);
        try (LocalLauncher job = builder.start()) {
            if (external != null) {
                serveGates(job, new UnsafeBuffer(shared.buffer(), 0, Table2FileDescriptor.CONTROL_LENGTH), external,
                        baselineResults, bound, raw);
            }
            try {
                job.awaitAll(bound);
            } catch (LocalLauncher.LaunchException e) {
                // The ranks' own "failed:" lines, which the report's last lines miss behind stack traces.
                List<String> failures = job.processes().stream().flatMap(p -> p.output().stream())
                        .filter(line -> line.contains(" failed: ")).toList();
                String failure = failures.isEmpty() ? e.getMessage() : e.getMessage() + "what the ranks reported:\n"
                        + String.join("\n", failures);
                return new JobOutcome(job.process(0).output(), failure); // call() keeps the complete rounds
            } finally {
                // The driver deletes it on an orderly close only; a killed rank leaves up to 3 terms behind.
                org.agrona.IoUtil.delete(Table2Rank.aeronDirectory(file).toFile(), true);
            }
            return new JobOutcome(job.process(0).output(), null);
        }
    }

    /** What the ranks' UCX needs beyond this JVM's environment (which they inherit); empty without the column. */
    private Map<String, String> ucxEnvironment() {
        return columns.contains(UcxColumn.NAME) ? UcxColumn.environment(transport, device, System.getenv()) : Map.of();
    }

    /**
     * Runs the baselines of each round when rank 0 asks at its round gate, then grants the round. Returns when
     * every round was granted or a rank exited (awaitAll then reports how).
     */
    private void serveGates(LocalLauncher job, UnsafeBuffer control, RdmaBaselines external,
                            List<Table2Result> results, Duration bound, Path raw)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + bound.toNanos();
        long granted = 0;
        while (granted < rounds && System.nanoTime() - deadline < 0) {
            if (job.processes().stream().anyMatch(p -> !p.isAlive())) {
                return;
            }
            // acquire: pairs with rank 0's release of the request
            long request = control.getLongAcquire(Table2FileDescriptor.GATE_REQUEST_OFFSET);
            if (request == granted + 1) {
                List<Table2Result> round = external.runRound((int) granted);
                results.addAll(round);
                round.forEach(r -> Table2RawFile.append(raw, r.line()));
                granted = request;
                control.putLongRelease(Table2FileDescriptor.GATE_GRANT_OFFSET, granted); // release: results taken first
            } else {
                Thread.sleep(5);
            }
        }
    }

    /** The baselines' section of an RDMA report: what ran and perftest's and DaRPC's own lines. */
    private String baselineMarkdown(List<Table2Result> results, List<String> raw) {
        if (baselines.isEmpty()) {
            return "";
        }
        StringBuilder md = new StringBuilder("## Baselines\n\n");
        md.append("Run by the launching JVM in the same guest while rank 0 waited at its round gate (rank 1 parked), right"
                + " before that round's columns: round r's baselines pair with round r's columns.\n\n");
        if (baselines.contains("perftest")) {
            md.append(String.format(Locale.ROOT, "- `ib_write_bw -d %s -x 1 -F -s SIZE -n %d` (perftest, server and client on"
                    + " this device; its message rate, bandwidth = rate x size) at %s B.%n", device, perftestIterations,
                    perftestSizes));
            md.append("  4096 B: ");
            for (Table2Result r : results) {
                if (r.column().equals(RdmaBaselines.IB_WRITE_BW) && r.payloadBytes() == 4096) {
                    md.append(String.format(Locale.ROOT, "round %d %,.0f msg/s = %.1f MB/s; ", r.round(), r.callsPerSecond(),
                            r.callsPerSecond() * 4096 / 1e6));
                }
            }
            md.setLength(md.length() - 2);
            md.append('\n');
        }
        if (baselines.contains("darpc")) {
            md.append(String.format(Locale.ROOT, "- DaRPC 1.9 (`DarpcBaseline`): one client JVM, one server JVM (one cluster"
                    + " thread, %s), %d calls in flight on one stream, max inline %d B, warm-up %s s per size; a request carries the payload's"
                    + " longs (+4 B count), the server sums them and answers the 8-byte sum; every answer is checked.%n",
                    darpcPolling ? "polling" : "CQ events", darpcDepth, darpcInline, trim(darpcWarmup)));
        }
        md.append("\n<details><summary>perftest and DaRPC result lines</summary>\n\n```\n");
        raw.forEach(line -> md.append(line).append('\n'));
        md.append("```\n</details>\n");
        return md.toString();
    }

    /** Checks the options and fills in the defaults derived from them; a ParameterException names every problem. */
    void validate() {
        List<String> problems = new ArrayList<>();
        if (!transport.equals("shm") && !transport.equals("rdma")) {
            problems.add("--transport must be shm or rdma, got '" + transport + "'");
        }
        if (columns == null || columns.isEmpty()) {
            columns = Columns.defaults(transport);
        }
        if (baselines == null) {
            baselines = transport.equals("rdma") ? List.of("perftest", "darpc") : List.of();
        }
        baselines = baselines.stream().filter(b -> !b.equals("none")).toList();
        for (String b : baselines) {
            if (!b.equals("perftest") && !b.equals("darpc")) {
                problems.add("--baselines: unknown '" + b + "', known: perftest, darpc, none");
            }
        }
        if (!baselines.isEmpty() && transport.equals("shm")) {
            problems.add("--baselines " + baselines + " run over RDMA only (--transport rdma)");
        }
        if (output == null) {
            output = Path.of("benchmarks/results", transport.equals("shm") ? "table2-shm.md"
                    : "table2-rdma-" + java.time.LocalDate.now(java.time.ZoneOffset.UTC) + ".md");
        }
        for (String column : columns) {
            if (!Columns.known().contains(column)) {
                problems.add("unknown column '" + column + "', known: " + Columns.known());
            }
        }
        if (columns.contains(UcxColumn.NAME) && UcxColumn.unavailableReason() != null) {
            problems.add("column " + UcxColumn.NAME + ": " + UcxColumn.unavailableReason());
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
        if (memoryPerStream == 0) {
            memoryPerStream = transport.equals("rdma") ? DEFAULT_RDMA_MEMORY_PER_STREAM : DEFAULT_SHM_MEMORY_PER_STREAM;
        }
        if (memoryPerStream < MIN_MEMORY_PER_STREAM || memoryPerStream > MAX_MEMORY_PER_STREAM
                || Integer.bitCount(memoryPerStream) != 1) {
            problems.add("--memory-per-stream must be a power of two in [" + MIN_MEMORY_PER_STREAM + ", "
                    + MAX_MEMORY_PER_STREAM + "], got " + memoryPerStream);
        }
        if (chunkSize == 0 && cMax > 0) {
            chunkSize = memoryPerStream / cMax & -64; // chunks are multiples of 64 bytes
        }
        try {
            Table2Rank.messengerConfig(chunkSize, c, cMax);
        } catch (IllegalArgumentException e) {
            problems.add("messenger settings: " + e.getMessage());
        }
        if (ringCapacity == 0) {
            ringCapacity = memoryPerStream;
        }
        if (ringCapacity < 4096 || Integer.bitCount(ringCapacity) != 1) {
            problems.add("--ring-capacity must be a power of two >= 4096, got " + ringCapacity);
        }
        if (aeronTermLength == 0) {
            aeronTermLength = 2 * memoryPerStream;
        }
        if (aeronTermLength < AeronIpcColumn.MIN_TERM_LENGTH || aeronTermLength > AeronIpcColumn.MAX_TERM_LENGTH
                || Integer.bitCount(aeronTermLength) != 1) {
            problems.add("--aeron-term-length must be a power of two in [" + AeronIpcColumn.MIN_TERM_LENGTH + ", "
                    + AeronIpcColumn.MAX_TERM_LENGTH + "], got " + aeronTermLength);
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
                        + " RETRY, coalescing while a link is backlogged (`write-eager`: the same calls without it);"
                        + " `write-reused` sends one lambda object over and over (no allocation by the caller per call);"
                        + " 2 processes x 1 worker thread over the %s; %s; waiting sides use"
                        + " Agrona BackoffIdleStrategy(64, 16, 1 us, 100 us) (the messengers' own)%s",
                rounds, trim(seconds), trim(slice), trim(warmup), columns, sizes, capacity / 1024, RawRingColumn.READ_LIMIT, chunkSize,
                c, cMax, transport.equals("shm") ? "shared-memory transport"
                        : "RDMA transport (fabric.transport=rdma, rdma.bindAddress=" + bindAddress + ", defaults otherwise)",
                senderCpu < 0 ? "threads not pinned"
                        : "sender thread pinned to CPU " + senderCpu + ", receiver thread to CPU " + receiverCpu,
                (columns.contains(LinkWriteColumn.NAME) ? "; `max-raw` = one `Link.write` (one RDMA WRITE) per message of"
                        + " the same longs + an 8-byte sequence word into a ring of " + LinkWriteColumn.SLOTS + " slots of the"
                        + " receiver's registered memory, over the fabric's own link; the receiver polls the next slot's"
                        + " word, sums the longs and returns credits with one `writeLong` every "
                        + LinkWriteColumn.SLOTS / 4 + " messages" : "")
                        + (columns.contains(AeronIpcColumn.NAME) ? String.format(Locale.ROOT, "; `%s` carries the same"
                        + " longs over Aeron IPC (`aeron:ipc`, term length %d KiB, one ExclusivePublication written in"
                        + " place with tryClaim/commit, the subscription polled %d fragments at a time; media driver"
                        + " embedded in the receiving rank, ThreadingMode.SHARED, the same back-off when idle, its"
                        + " thread not pinned)", AeronIpcColumn.NAME, aeronTermLength / 1024, AeronIpcColumn.FRAGMENT_LIMIT)
                        : "")
                        + (columns.contains(UcxColumn.NAME) ? ucxText() : "")
                        + inliningText()
                        + (rankJvmOptions.isEmpty() ? "" : "; rank JVM options " + rankJvmOptions)
                        + (context == null ? "" : "; " + context));
    }

    /** JUCX's version from its Maven metadata in the class path, or "?" (JUCX itself does not report it). */
    static String jucxVersion() {
        try (var in = Table2Benchmark.class.getResourceAsStream("/META-INF/maven/org.openucx/jucx/pom.properties")) {
            java.util.Properties properties = new java.util.Properties();
            if (in != null) {
                properties.load(in);
            }
            return properties.getProperty("version", "?");
        } catch (IOException e) {
            return "?";
        }
    }

    private String ucxText() {
        Map<String, String> env = new java.util.TreeMap<>();
        System.getenv().forEach((k, v) -> {
            if (k.startsWith("UCX_")) {
                env.put(k, v);
            }
        });
        env.putAll(ucxEnvironment());
        return String.format(Locale.ROOT, "; `%s` carries the same longs as UCX active messages through JUCX"
                + " (`sendAmNonBlocking` from %d staging slots of %d B, the stream's memory, each reused once its"
                + " request completed; the sender progresses its worker every %d messages and while it waits for a"
                + " slot; rank 1's AM handler sums the longs inside `worker.progress()`; worker address through the"
                + " control block), UCX library " + UcxColumn.libraryVersion() + " with JUCX "
                + jucxVersion() + ", UCX environment of the ranks: %s", UcxColumn.NAME,
                ringCapacity / UcxColumn.SLOT_BYTES, UcxColumn.SLOT_BYTES, UcxColumn.PROGRESS_EVERY, env);
    }

    /** How the ranks force-inline the fabric's entry points: the directives a join installs, or flags on top. */
    private static String inliningText() {
        String prefix = "-XX:CompileCommand=inline,";
        List<String> inlined = LocalLauncher.inheritedJvmFlags().stream().filter(a -> a.startsWith(prefix))
                .map(a -> a.substring(prefix.length())).toList();
        boolean directives = !LocalLauncher.inheritedJvmFlags().contains("-Dfabric.jit.directives=false")
                && !"false".equals(System.getProperty("fabric.jit.directives"));
        return (directives ? "; the ranks install fabricrpc's compiler directives at join (force-inlining the call"
                + " path, fabric.jit.directives)" : "; fabric.jit.directives=false: no compiler directives")
                + (inlined.isEmpty() ? "" : "; flags force-inline " + String.join(", ", inlined)
                + " (-XX:CompileCommand, fabricrpc.jit.flags)");
    }

    private String memory(int capacity) {
        long messenger = (long) cMax * chunkSize;
        return String.format(Locale.ROOT, "- Memory per stream (`--memory-per-stream`): **%d KiB**, what the"
                        + " sender may write ahead of the receiver before it waits, in every column that streams: a"
                        + " messenger's chunks, the raw ring, Aeron's window. On these machines a vCPU can stall for"
                        + " milliseconds; a stream with more memory rides out longer stalls, so unequal budgets would"
                        + " measure the budgets.%n"
                        + "- Per messenger (one sender thread to one destination thread, `write`): at"
                        + " most cMax x chunkSize = %d x %d B = **%d KiB** of chunks at the receiver (allocated %d at a"
                        + " time on demand), plus one %d KiB staging chunk at the sender.%n"
                        + "- `send`: no per-pair memory; each worker has a fixed 1 MiB queue the service thread routes"
                        + " into (`SendCalls.QUEUE_BYTES`), behind the transport's per-endpoint message"
                        + " queue.%n"
                        + "- `trad`, `ovfl`: each aggregation view has messengers of its own (the same bound again per"
                        + " sender and destination). `trad` "
                        + (transport.equals("shm")
                                ? "serializes straight into the receiver's mapped chunk and publishes every 4 KiB with"
                                        + " one releasing store"
                                : "batches into the messenger's registered staging chunk and sends each 4 KiB batch"
                                        + " as one WRITE")
                        + " (`AggregationConfig.traditional()`); `ovfl` sends directly while the chunks have"
                        + " room and keeps what exceeds in a region of at most 16 MiB (`AggregationConfig.overflow()`).%n"
                        + "- `raw`: one ring of %d KiB (+ %d B trailer).%n"
                        + "- `aeron-ipc`: a log of 3 terms of %d KiB (Aeron's IPC window: half a term), plus the"
                        + " driver's own files.%s",
                memoryPerStream / 1024, cMax, chunkSize, messenger / 1024, c, chunkSize / 1024, capacity / 1024,
                org.agrona.concurrent.ringbuffer.RingBufferDescriptor.TRAILER_LENGTH, aeronTermLength / 1024,
                columns.contains(UcxColumn.NAME) ? String.format(Locale.ROOT, "%n- `ucx`: %d KiB of staging slots at"
                        + " the sender (a message's slot is reused once UCX completed its send), on top of UCX's own"
                        + " buffers (under shm a receive FIFO of 256 elements by default, UCX_POSIX_FIFO_SIZE).",
                        capacity / 1024) : "");
    }

    private static String trim(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value);
    }
}
