package io.fabricrpc.benchmarks.table2;

import io.fabricrpc.benchmarks.Report;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;

/**
 * The results of a Table 2 run as Markdown (the committed results file) and a console summary: median calls/s and
 * MB/s per column and size, the medians of per-round ratios between columns, the targets, memory per messenger
 * and allocation per call. Under RDMA, {@code columns} also holds the external baselines' pseudo-columns
 * ({@link RdmaBaselines#IB_WRITE_BW}, {@link RdmaBaselines#DARPC}), measured in the same rounds, and
 * {@code extra} is Markdown appended after the rounds (the baselines' raw output).
 */
public record Table2Report(Report.Machine machine, double loadBefore, double loadAfter, String parameters,
                           String memory, String note, List<String> columns, List<Integer> sizes,
                           List<Table2Result> results, Map<Integer, Double> lambdaBytes, String chartFile,
                           String transport, String extra) {

    /** A ratio the report gives when both columns ran: {@code numerator / denominator} per round, then the median. */
    public record Ratio(String numerator, String denominator) {
        String label() {
            return numerator + "/" + denominator;
        }
    }

    /** Ratios in report order; a run shows those whose two columns it measured. */
    public static final List<Ratio> RATIOS = List.of(new Ratio("write", "raw"), new Ratio("send", "raw"),
            new Ratio("ovfl", "write"), new Ratio("trad", "raw"), new Ratio("write", LinkWriteColumn.NAME),
            new Ratio("send", LinkWriteColumn.NAME), new Ratio("trad", LinkWriteColumn.NAME),
            new Ratio("write", RdmaBaselines.IB_WRITE_BW), new Ratio(LinkWriteColumn.NAME, RdmaBaselines.IB_WRITE_BW),
            new Ratio("write", RdmaBaselines.DARPC), new Ratio("write", Columns.WRITE_EAGER),
            new Ratio(Columns.WRITE_EAGER, RdmaBaselines.IB_WRITE_BW), new Ratio(Columns.WRITE_REUSED, "raw"),
            new Ratio(Columns.WRITE_REUSED, LinkWriteColumn.NAME),
            new Ratio(Columns.WRITE_REUSED, RdmaBaselines.IB_WRITE_BW), new Ratio("write", AeronIpcColumn.NAME),
            new Ratio(Columns.WRITE_REUSED, AeronIpcColumn.NAME), new Ratio("trad", AeronIpcColumn.NAME),
            new Ratio("write", UcxColumn.NAME), new Ratio(Columns.WRITE_REUSED, UcxColumn.NAME),
            new Ratio("trad", UcxColumn.NAME), new Ratio(UcxColumn.NAME, AeronIpcColumn.NAME),
            new Ratio(UcxColumn.NAME, LinkWriteColumn.NAME));

    /** Columns that move raw messages, not calls: no lambda of their own. */
    static final List<String> MESSAGE_COLUMNS = List.of("raw", AeronIpcColumn.NAME, LinkWriteColumn.NAME,
            UcxColumn.NAME);

    /** Pseudo-columns of external baselines: no calls, no allocation or CPU figures of ours. */
    static final List<String> BASELINES = List.of(RdmaBaselines.IB_WRITE_BW, RdmaBaselines.DARPC);

    /** The RDMA targets (issue 6): write / ib_write_bw message rate, trad / ib_write_bw 4 KiB bandwidth, vs DaRPC. */
    static final double RDMA_RATE_TARGET = 0.8;
    static final double RDMA_BANDWIDTH_TARGET = 0.9;
    static final int RDMA_BANDWIDTH_SIZE = 4096;
    static final double RDMA_DARPC_TARGET = 3.0;
    static final int RDMA_DARPC_SIZE = 64;

    /** Seriema's Table 2 (MB/s, RDMA over FDR InfiniBand), for orientation only. */
    private static final String SERIEMA_TABLE = """
            | size (B) | send | write | trad | ovfl | max-raw |
            |---:|---:|---:|---:|---:|---:|
            | 8 | 12.07 | 38.39 | 2116.78 | 36.52 | 35.84 |
            | 64 | 112.95 | 301.47 | 4256.14 | 283.15 | 291.93 |
            | 256 | 367.08 | 1129.82 | 5318.89 | 1061.37 | 1135.74 |
            """;

    List<Table2Result> rounds(String column, int size) {
        return results.stream().filter(r -> r.column().equals(column) && r.payloadBytes() == size).toList();
    }

    /** Median over rounds of calls/s of one column and size; NaN if it did not run. */
    public double medianCallsPerSecond(String column, int size) {
        return median(rounds(column, size).stream().mapToDouble(Table2Result::callsPerSecond).toArray());
    }

    /** Median over rounds of {@code numerator calls/s / denominator calls/s} in the same round; NaN if absent. */
    public double medianRatio(Ratio ratio, int size) {
        return median(perRoundRatios(ratio, size));
    }

    double[] perRoundRatios(Ratio ratio, int size) {
        return perRoundRatiosByRound(ratio, size).values().stream().mapToDouble(Double::doubleValue).toArray();
    }

    /** Per round (key): {@code numerator calls/s / denominator calls/s} in that round. */
    SortedMap<Integer, Double> perRoundRatiosByRound(Ratio ratio, int size) {
        SortedMap<Integer, Double> values = new TreeMap<>();
        for (Table2Result t : rounds(ratio.numerator(), size)) {
            for (Table2Result b : rounds(ratio.denominator(), size)) {
                if (b.round() == t.round()) {
                    values.put(t.round(), t.callsPerSecond() / b.callsPerSecond());
                }
            }
        }
        return values;
    }

    List<Ratio> ratiosShown() {
        return RATIOS.stream().filter(r -> columns.contains(r.numerator()) && columns.contains(r.denominator())).toList();
    }

    /** Bytes allocated per call over all rounds of one column and size, by the sender or the receiver thread. */
    public double bytesPerCall(String column, int size, boolean sender) {
        return bytesPerCall(column, size, sender ? Table2Result::senderBytes : Table2Result::receiverBytes);
    }

    double bytesPerCall(String column, int size, java.util.function.ToLongFunction<Table2Result> bytes) {
        List<Table2Result> rounds = rounds(column, size);
        long calls = rounds.stream().mapToLong(Table2Result::calls).sum();
        long total = rounds.stream().mapToLong(bytes).sum();
        return calls == 0 ? Double.NaN : (double) total / calls;
    }

    /** "shared memory" or "RDMA (...)": what the title says the calls crossed. */
    String medium() {
        return transport.equals("shm") ? "shared memory" : "RDMA verbs";
    }

    boolean isBaseline(String column) {
        return BASELINES.contains(column);
    }

    /**
     * Per round: {@code column}'s payload MB/s at {@code size} over {@code baseline}'s MB/s at {@code baselineSize}
     * (bandwidth = calls/s x bytes).
     */
    double[] perRoundBandwidthRatios(String column, int size, String baseline, int baselineSize) {
        List<Double> values = new ArrayList<>();
        for (Table2Result t : rounds(column, size)) {
            for (Table2Result b : rounds(baseline, baselineSize)) {
                if (b.round() == t.round()) {
                    values.add(t.callsPerSecond() * size / (b.callsPerSecond() * baselineSize));
                }
            }
        }
        return values.stream().mapToDouble(Double::doubleValue).toArray();
    }

    public String markdown() {
        StringBuilder md = new StringBuilder();
        md.append("# Seriema Table 2 on ").append(medium()).append(": call throughput per column\n\n");
        md.append(transport.equals("shm") ? "Written by `benchmarks/run-table2-bench.sh`"
                : "Written by `scripts/run-table2-rdma-bench.sh` (in one Soft-RoCE guest run)");
        md.append(" (`io.fabricrpc.benchmarks.table2.Table2Benchmark`);"
                + " overwritten by every run. One sender thread in rank 0 calls one receiver thread in rank 1 (two"
                + " JVMs); a measurement runs from the first send until the receiver has run every call. Medians over"
                + " rounds; ratios are per round (the columns ran back to back, in rotating order), then the median."
                + " MB/s = payload bytes x calls/s / 10^6.\n\n");
        if (chartFile != null) {
            md.append("![calls/s per column and payload size](").append(chartFile).append(")\n\n");
        }
        machine.appendMarkdown(md, loadBefore, loadAfter);
        md.append("## Parameters\n\n").append(parameters).append("\n\n");
        md.append("## Summary\n\n").append(summaryTables()).append('\n').append(targetsText()).append('\n');
        md.append("## Memory\n\n").append(memory).append("\n\n");
        md.append("## Allocation per call (steady state)\n\n");
        md.append("Bytes the sending thread and the receiving thread allocated during the measured rounds, divided by"
                + " the calls (`ThreadMXBean#getThreadAllocatedBytes`). The caller allocates the lambda object of"
                + " each call itself (its size, measured on the sender, is the `lambda` column); `beyond lambda` is"
                + " what the column allocates on top of it. `other threads` are the remaining threads of each process"
                + " (service thread, flusher, liveness and control-plane threads), whose background work is counted"
                + " too.\n\n");
        md.append("| size (B) | column | sender B/call | lambda B | sender beyond lambda | receiver B/call |"
                + " sender's other threads B/call | receiver's other threads B/call |\n");
        md.append("|---:|---|---:|---:|---:|---:|---:|---:|\n");
        for (int size : sizes) {
            double lambda = lambdaBytes.getOrDefault(size, Double.NaN);
            for (String column : columns) {
                if (isBaseline(column)) {
                    continue;
                }
                double sender = bytesPerCall(column, size, true);
                boolean calls = !MESSAGE_COLUMNS.contains(column);
                double callLambda = column.equals(Columns.WRITE_REUSED) ? 0 : lambda; // one lambda, built once
                md.append("| ").append(size).append(" | ").append(column).append(" | ").append(bytes(sender))
                        .append(" | ").append(calls ? bytes(callLambda) : "-").append(" | ")
                        .append(calls ? bytes(sender - callLambda) : "-").append(" | ")
                        .append(bytes(bytesPerCall(column, size, false))).append(" | ")
                        .append(bytes(bytesPerCall(column, size, Table2Result::senderOtherBytes))).append(" | ")
                        .append(bytes(bytesPerCall(column, size, Table2Result::receiverOtherBytes))).append(" |\n");
            }
        }
        md.append('\n');
        md.append("## CPU time per call\n\n");
        md.append("CPU nanoseconds the sending and the receiving thread used per call over all rounds"
                + " (`ThreadMXBean#getCurrentThreadCpuTime`), next to the wall-clock nanoseconds per call (1 / calls/s)."
                + " A side whose CPU time is close to the wall-clock time was busy throughout: it sets the pace. The"
                + " receiver's time includes polling while it waits (busy spin, then yields, then parks). On a loaded"
                + " machine both fall short of wall-clock time when the thread waits for a CPU.\n\n");
        md.append("| size (B) | column | wall ns/call | sender CPU ns/call | receiver CPU ns/call |\n");
        md.append("|---:|---|---:|---:|---:|\n");
        for (int size : sizes) {
            for (String column : columns) {
                if (isBaseline(column)) {
                    continue;
                }
                List<Table2Result> rounds = rounds(column, size);
                long calls = rounds.stream().mapToLong(Table2Result::calls).sum();
                double wall = (double) rounds.stream().mapToLong(Table2Result::nanos).sum() / calls;
                double sender = (double) rounds.stream().mapToLong(Table2Result::senderCpuNanos).sum() / calls;
                double receiver = (double) rounds.stream().mapToLong(Table2Result::receiverCpuNanos).sum() / calls;
                md.append(String.format(Locale.ROOT, "| %d | %s | %.1f | %.1f | %.1f |%n", size, column, wall, sender,
                        receiver));
            }
        }
        md.append('\n');
        md.append("## Rounds\n\n");
        md.append("calls/s of each column per round (all its slices together; the order is that of the round's first slice, later slices rotate it).\n\n");
        md.append("| size (B) | round | order |");
        columns.forEach(c -> md.append(' ').append(c).append(" |"));
        ratiosShown().forEach(r -> md.append(' ').append(r.label()).append(" |"));
        md.append("\n|---:|---:|---|");
        columns.forEach(c -> md.append("---:|"));
        ratiosShown().forEach(r -> md.append("---:|"));
        md.append('\n');
        int roundCount = results.stream().mapToInt(Table2Result::round).max().orElse(-1) + 1;
        for (int size : sizes) {
            for (int round = 0; round < roundCount; round++) {
                int r = round;
                List<Table2Result> inRound = results.stream()
                        .filter(x -> x.payloadBytes() == size && x.round() == r).sorted(
                                java.util.Comparator.comparingInt(Table2Result::position)).toList();
                md.append("| ").append(size).append(" | ").append(round).append(" | ")
                        .append(String.join(", ", inRound.stream().map(Table2Result::column).toList())).append(" |");
                for (String column : columns) {
                    md.append(' ').append(inRound.stream().filter(x -> x.column().equals(column)).findFirst()
                            .map(x -> count(x.callsPerSecond())).orElse("-")).append(" |");
                }
                for (Ratio ratio : ratiosShown()) {
                    double top = inRound.stream().filter(x -> x.column().equals(ratio.numerator()))
                            .mapToDouble(Table2Result::callsPerSecond).findFirst().orElse(Double.NaN);
                    double bottom = inRound.stream().filter(x -> x.column().equals(ratio.denominator()))
                            .mapToDouble(Table2Result::callsPerSecond).findFirst().orElse(Double.NaN);
                    md.append(' ').append(ratio(top / bottom)).append(" |");
                }
                md.append('\n');
            }
        }
        md.append('\n');
        if (extra != null && !extra.isBlank()) {
            md.append(extra.strip()).append("\n\n");
        }
        md.append("## Seriema's Table 2, for orientation\n\n");
        md.append("MB/s of `call` in the paper (RDMA over FDR InfiniBand between two Xeon E5-2620v4 machines; its"
                + " `max-raw` is send-based RDMA without copies). Different hardware and transport: compare ratios"
                + " between columns, not absolute numbers.\n\n").append(SERIEMA_TABLE).append('\n');
        if (note != null && !note.isBlank()) {
            md.append("## Notes\n\n").append(note.strip()).append('\n');
        }
        return md.toString();
    }

    public String summary() {
        return "Table 2 on " + medium() + " (" + parameters + ")\n" + summaryTables() + targetsText();
    }

    private String summaryTables() {
        StringBuilder t = new StringBuilder();
        t.append("| size (B) |");
        columns.forEach(c -> t.append(' ').append(c).append(" calls/s |"));
        columns.forEach(c -> t.append(' ').append(c).append(" MB/s |"));
        ratiosShown().forEach(r -> t.append(' ').append(r.label()).append(" |"));
        t.append("\n|---:|");
        for (int i = 0; i < 2 * columns.size() + ratiosShown().size(); i++) {
            t.append("---:|");
        }
        t.append('\n');
        for (int size : sizes) {
            t.append("| ").append(size).append(" |");
            for (String column : columns) {
                t.append(' ').append(count(medianCallsPerSecond(column, size))).append(" |");
            }
            for (String column : columns) {
                t.append(' ').append(String.format(Locale.ROOT, "%.1f", medianCallsPerSecond(column, size) * size / 1e6))
                        .append(" |");
            }
            for (Ratio ratio : ratiosShown()) {
                t.append(" **").append(ratio(medianRatio(ratio, size))).append("** |");
            }
            t.append('\n');
        }
        if (!ratiosShown().isEmpty()) {
            t.append("\nSpread of the per-round ratios (min .. max):");
            for (Ratio ratio : ratiosShown()) {
                for (int size : sizes) {
                    double[] values = perRoundRatios(ratio, size);
                    Arrays.sort(values);
                    if (values.length > 0) {
                        t.append(' ').append(ratio.label()).append(' ').append(size).append(" B ")
                                .append(ratio(values[0])).append(" .. ").append(ratio(values[values.length - 1]))
                                .append(';');
                    }
                }
            }
            t.setLength(t.length() - 1);
            t.append(".\n");
        }
        return t.toString();
    }

    private String targetsText() {
        if (!transport.equals("shm")) {
            return rdmaTargetsText();
        }
        List<String> lines = new ArrayList<>();
        for (ShmTarget target : SHM_TARGETS) {
            if (columns.contains(target.ratio().numerator()) && columns.contains(target.ratio().denominator())
                    && sizes.contains(target.size())) {
                lines.add(shmTargetText(target));
            }
        }
        if (lines.isEmpty()) {
            return "";
        }
        return "Targets (issues 3 and 4, reported, not asserted): the median of the per-round ratios, then how many"
                + " rounds reached the target; where the raw ring changed placement during the run (its fastest"
                + " round " + RingPlacement.SPAN + "x or more its slowest), the rounds of each placement separately,"
                + " split at the largest jump between rounds' raw rates.\n\n" + String.join("", lines);
    }

    /** A target of issues 3 and 4 on shared memory: {@code ratio} at {@code size} at least {@code threshold}. */
    record ShmTarget(String issue, String text, Ratio ratio, int size, double threshold) {}

    static final List<ShmTarget> SHM_TARGETS = List.of(
            new ShmTarget("3", "write calls/s >= 0.5x raw", new Ratio("write", "raw"), 8, 0.5),
            new ShmTarget("3", "write calls/s >= 0.8x raw", new Ratio("write", "raw"), 256, 0.8),
            // The issue names "Aeron/Agrona" as the baseline: Aeron's IPC is given beside the bare Agrona ring.
            new ShmTarget("3", "write calls/s >= 0.5x Aeron IPC", new Ratio("write", AeronIpcColumn.NAME), 8, 0.5),
            new ShmTarget("3", "write calls/s >= 0.8x Aeron IPC", new Ratio("write", AeronIpcColumn.NAME), 256, 0.8),
            new ShmTarget("4", "ovfl calls/s within 10% of write", new Ratio("ovfl", "write"), 8, 0.9),
            new ShmTarget("4", "ovfl calls/s within 10% of write", new Ratio("ovfl", "write"), 64, 0.9),
            new ShmTarget("4", "ovfl calls/s within 10% of write", new Ratio("ovfl", "write"), 256, 0.9),
            new ShmTarget("4", "trad calls/s >= 10x write", new Ratio("trad", "write"), 8, 10.0),
            // Same payload size on both sides: the calls/s ratio is the MB/s ratio.
            new ShmTarget("4", "trad MB/s within 10% of raw", new Ratio("trad", "raw"), 256, 0.9));

    private String shmTargetText(ShmTarget target) {
        SortedMap<Integer, Double> byRound = perRoundRatiosByRound(target.ratio(), target.size());
        double[] all = byRound.values().stream().mapToDouble(Double::doubleValue).toArray();
        double value = median(all);
        StringBuilder t = new StringBuilder(String.format(Locale.ROOT, "- issue %s, %s at %d B (%s >= %s): **%s** (%s;"
                        + " %s)", target.issue(), target.text(), target.size(), target.ratio().label(),
                ratio(target.threshold()), ratio(value), met(value, target.threshold()),
                reached(all, target.threshold())));
        String base = target.ratio().denominator();
        if (target.ratio().numerator().equals("write") && MESSAGE_COLUMNS.contains(base)
                && columns.contains(Columns.WRITE_REUSED)) {
            t.append(String.format(Locale.ROOT, " [without the caller's lambda allocation (write-reused/%s): %s]",
                    base, ratio(medianRatio(new Ratio(Columns.WRITE_REUSED, base), target.size()))));
        }
        if (columns.contains("raw")) {
            RingPlacement.of(rounds("raw", target.size())).ifPresent(placement -> t.append(String.format(Locale.ROOT,
                    "; fast raw ring (rounds %s, raw >= %s msg/s): %s; slow raw ring (rounds %s, raw <= %s msg/s): %s",
                    placement.fast(), count(placement.above()), placementText(byRound, placement.fast(), target),
                    placement.slow(), count(placement.below()), placementText(byRound, placement.slow(), target))));
        }
        return t.append('\n').toString();
    }

    private static String placementText(SortedMap<Integer, Double> byRound, List<Integer> rounds,
                                        ShmTarget target) {
        double[] values = rounds.stream().filter(byRound::containsKey).mapToDouble(byRound::get).toArray();
        double value = median(values);
        return String.format(Locale.ROOT, "median %s, %s, %s", ratio(value), met(value, target.threshold()),
                reached(values, target.threshold()));
    }

    /** "k of n rounds at or above, min .. max". */
    private static String reached(double[] values, double threshold) {
        if (values.length == 0) {
            return "no rounds";
        }
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        long at = Arrays.stream(sorted).filter(v -> v >= threshold).count();
        return String.format(Locale.ROOT, "%d of %d rounds at or above, %s .. %s", at, sorted.length, ratio(sorted[0]),
                ratio(sorted[sorted.length - 1]));
    }

    /** Issue 6's targets, each a median of per-round ratios (baseline and columns ran in the same round). */
    String rdmaTargetsText() {
        StringBuilder t = new StringBuilder("Targets (issue 6, reported, not asserted; median of per-round ratios):\n\n");
        boolean any = false;
        if (columns.contains("write") && columns.contains(RdmaBaselines.IB_WRITE_BW)) {
            for (int size : sizes) {
                double value = medianRatio(new Ratio("write", RdmaBaselines.IB_WRITE_BW), size);
                t.append(String.format(Locale.ROOT, "- write calls/s / ib_write_bw msg/s at %d B: **%s** (target >= %.1fx: %s)%n",
                        size, ratio(value), RDMA_RATE_TARGET, met(value, RDMA_RATE_TARGET)));
                any = true;
            }
        }
        if (columns.contains(RdmaBaselines.IB_WRITE_BW) && !rounds(RdmaBaselines.IB_WRITE_BW, RDMA_BANDWIDTH_SIZE).isEmpty()) {
            for (String column : List.of("trad", "write", LinkWriteColumn.NAME)) {
                if (!columns.contains(column)) {
                    continue;
                }
                for (int size : sizes) {
                    double value = median(perRoundBandwidthRatios(column, size, RdmaBaselines.IB_WRITE_BW, RDMA_BANDWIDTH_SIZE));
                    boolean target = column.equals("trad");
                    t.append(String.format(Locale.ROOT, "- %s MB/s at %d B calls / ib_write_bw MB/s at %d B: %s%s%n", column,
                            size, RDMA_BANDWIDTH_SIZE, target ? "**" + ratio(value) + "**" : ratio(value), target
                                    ? String.format(Locale.ROOT, " (target >= %.1fx: %s)", RDMA_BANDWIDTH_TARGET,
                                    met(value, RDMA_BANDWIDTH_TARGET)) : ""));
                    any = true;
                }
            }
        }
        if (columns.contains(RdmaBaselines.DARPC) && sizes.contains(RDMA_DARPC_SIZE)) {
            String best = null;
            double bestValue = Double.NaN;
            for (String column : columns) {
                if (isBaseline(column) || MESSAGE_COLUMNS.contains(column)
                        || column.equals(Columns.WRITE_EAGER) || column.equals(Columns.WRITE_REUSED)) {
                    continue; // baselines and diagnostic views of `write`
                }
                double value = medianRatio(new Ratio(column, RdmaBaselines.DARPC), RDMA_DARPC_SIZE);
                t.append(String.format(Locale.ROOT, "- %s calls/s / DaRPC calls/s at %d B: %s%s%n", column, RDMA_DARPC_SIZE,
                        column.equals("write") ? "**" + ratio(value) + "**" : ratio(value), column.equals("write")
                                ? String.format(Locale.ROOT, " (target >= %.1fx: %s)", RDMA_DARPC_TARGET,
                                met(value, RDMA_DARPC_TARGET)) : ""));
                if (best == null || value > bestValue) {
                    best = column;
                    bestValue = value;
                }
                any = true;
            }
            if (best != null) {
                t.append(String.format(Locale.ROOT, "- best of our call columns vs DaRPC at %d B: %s, **%s** (target >= %.1fx: %s)%n",
                        RDMA_DARPC_SIZE, best, ratio(bestValue), RDMA_DARPC_TARGET, met(bestValue, RDMA_DARPC_TARGET)));
            }
        }
        return any ? t.toString() : "";
    }

    private static String met(double value, double target) {
        return Double.isNaN(value) ? "not measured" : value >= target ? "met" : "NOT met";
    }

    static double median(double[] values) {
        if (values.length == 0) {
            return Double.NaN;
        }
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int mid = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }

    static double median(List<Table2Result> rounds, ToDoubleFunction<Table2Result> metric) {
        return median(rounds.stream().mapToDouble(metric).toArray());
    }

    private static String ratio(double value) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%.2fx", value);
    }

    private static String count(double value) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%,.0f", value);
    }

    private static String bytes(double value) {
        return Double.isNaN(value) ? "-" : value == 0 ? "0" : String.format(Locale.ROOT, "%.2f", value);
    }

    private static String fmt(double value) {
        return String.format(Locale.ROOT, "%.2f", value);
    }
}
