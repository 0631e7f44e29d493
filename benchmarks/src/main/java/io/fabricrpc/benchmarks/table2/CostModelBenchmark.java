package io.fabricrpc.benchmarks.table2;

import io.fabricrpc.fabric.LocalLauncher;
import io.fabricrpc.transport.Transports;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;

/**
 * A verbs cost model of a call: per call, what the sender asks of an RDMA NIC (post calls, i.e. doorbells; work
 * requests; signaled completions; bytes) and its CPU time, from a 2-process job over the {@code counted} transport
 * ({@link CountingTransport}, {@link CostModelRank}); then calls/s per sender projected onto NIC message rates as
 * min(1 / CPU per call, NIC rate / WRs per call), beside Seriema's Table 2. Over shm without windows it runs the RDMA
 * code path at native speed; in the Soft-RoCE guest, over real verbs (the counts hold, the CPU times are emulated).
 */
@Command(name = "cost-model", mixinStandardHelpOptions = true,
        description = "Per-call verbs counts and CPU of write/trad/ovfl, projected onto NIC message rates.")
public final class CostModelBenchmark implements Callable<Integer> {
    @Option(names = "--inner", description = "Transport under the counts: shm (no windows: RDMA's path) or rdma.")
    String inner = "shm";
    @Option(names = "--bind-address", description = "rdma: the address of the RDMA interface (rdma.bindAddress).")
    String bindAddress;
    @Option(names = "--rounds", description = "Measured rounds per column and size (default ${DEFAULT-VALUE}).")
    int rounds = 5;
    @Option(names = "--batches", description = "Batches per round (default ${DEFAULT-VALUE}).")
    int batches = 10;
    @Option(names = "--calls", description = "Calls per batch (default ${DEFAULT-VALUE}).")
    int calls = 10_000;
    @Option(names = "--warmup", description = "Warm-up batches per column and size (default ${DEFAULT-VALUE}).")
    int warmup = 20;
    @Option(names = "--output", description = "Report file (default: standard output only).")
    Path output;
    @Option(names = "--note", description = "A line for the report.")
    String note = "";

    /** NIC message rates the projection assumes, with where each comes from. */
    static final Map<String, Double> NIC_RATES = new LinkedHashMap<>();
    static final String NIC_SOURCES = "ConnectX-3 Pro FDR (Seriema's NIC): 35 M small WRITEs/s, the order measured "
            + "for ConnectX-3 with many posting cores (Kalia et al., ATC'16), an assumption; ConnectX-6: 215 M "
            + "messages/s, NVIDIA's product brief.";
    /** Seriema's Table 2 (MB/s, ConnectX-3 Pro FDR) as calls/s: MB/s x 10^6 / call size. */
    static final Map<String, double[]> SERIEMA = new LinkedHashMap<>();

    static {
        NIC_RATES.put("ConnectX-3 FDR", 35e6);
        NIC_RATES.put("ConnectX-6", 215e6);
        SERIEMA.put("write", new double[] {38.39e6 / 8, 301.47e6 / 64, 1129.82e6 / 256});
        SERIEMA.put("trad", new double[] {2116.78e6 / 8, 4256.14e6 / 64, 5318.89e6 / 256});
        SERIEMA.put("ovfl", new double[] {36.52e6 / 8, 283.15e6 / 64, 1061.37e6 / 256});
    }

    private static final String[] KEYS = {"cpuNs", "posts", "wrs", "bytes", "checks", "innerWrs", "innerSignaled",
        "innerPolls"};

    public static void main(String[] args) {
        System.exit(new CommandLine(new CostModelBenchmark()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        List<String> jvm = new ArrayList<>(LocalLauncher.inheritedJvmFlags());
        jvm.add("-Xmx512m");
        jvm.add("-D" + Transports.KIND_KEY + "=" + CountingTransport.KIND);
        jvm.add("-D" + CountingTransport.INNER_KEY + "=" + inner);
        if (inner.equals("shm")) {
            jvm.add("-Dshm.directWindows=false"); // RDMA's staged path
        } else if (bindAddress != null) {
            jvm.add("-Drdma.bindAddress=" + bindAddress);
        }
        String[] args = {"--rounds", Integer.toString(rounds), "--batches", Integer.toString(batches),
                "--calls", Integer.toString(calls), "--warmup", Integer.toString(warmup)};
        List<String> lines = new ArrayList<>();
        try (LocalLauncher job = LocalLauncher.builder(CostModelRank.class).processes(2).threadsPerProcess(1)
                .jvmArgs(jvm.toArray(String[]::new)).args(args).start()) {
            job.awaitAll(Duration.ofMinutes(60));
            for (LocalLauncher.RankProcess p : job.processes()) {
                p.output().stream().filter(l -> l.startsWith("COST ")).forEach(lines::add);
            }
        }
        String report = report(lines);
        System.out.print(report);
        if (output != null) {
            Files.createDirectories(output.toAbsolutePath().getParent());
            Files.writeString(output, report);
        }
        return 0;
    }

    /** Per side, column and size: the median over rounds of each count per call. */
    static Map<String, double[]> perCall(List<String> lines) {
        Map<String, List<double[]>> rounds = new TreeMap<>();
        for (String line : lines) {
            Map<String, String> f = fields(line);
            double n = Double.parseDouble(f.get("calls"));
            double[] values = new double[KEYS.length];
            for (int k = 0; k < KEYS.length; k++) {
                values[k] = Double.parseDouble(f.get(KEYS[k])) / n;
            }
            rounds.computeIfAbsent(f.get("side") + " " + f.get("column") + " " + f.get("size"), x -> new ArrayList<>())
                    .add(values);
        }
        Map<String, double[]> medians = new TreeMap<>();
        rounds.forEach((key, list) -> {
            double[] m = new double[KEYS.length];
            for (int k = 0; k < KEYS.length; k++) {
                int at = k;
                double[] sorted = list.stream().mapToDouble(v -> v[at]).sorted().toArray();
                m[k] = sorted[sorted.length / 2];
            }
            medians.put(key, m);
        });
        return medians;
    }

    private static Map<String, String> fields(String line) {
        Map<String, String> f = new LinkedHashMap<>();
        for (String part : line.substring("COST ".length()).split(" ")) {
            int eq = part.indexOf('=');
            f.put(part.substring(0, eq), part.substring(eq + 1));
        }
        return f;
    }

    String report(List<String> lines) {
        Map<String, double[]> m = perCall(lines);
        boolean measuredWrs = m.values().stream().anyMatch(v -> v[5] > 0);
        StringBuilder out = new StringBuilder();
        out.append("# Verbs cost model of a call (").append(LocalDate.now()).append(")\n\n");
        out.append("Written by `benchmarks/run-cost-model.sh` (`io.fabricrpc.benchmarks.table2.CostModelBenchmark`): ")
                .append("2 processes x 1 thread, transport `counted` over `").append(inner)
                .append(inner.equals("shm") ? "` without windows (RDMA's staged path at native speed)" : "`")
                .append("; ").append(rounds).append(" rounds of ").append(batches).append(" batches of ")
                .append(calls).append(" calls per column and size, each batch flushed and acknowledged; medians over ")
                .append("rounds.\n\n");
        if (!note.isEmpty()) {
            out.append(note).append("\n\n");
        }
        out.append("## Per call\n\nSender: CPU of its send loop and flush; posts (one doorbell each), work requests ")
                .append(measuredWrs ? "(counted, and as the verbs link counted them), signaled completions reaped, CQ polls, "
                        : "(as RDMA would post them), ")
                .append("payload bytes, completion checks. Receiver: CPU of its `processCalls` rounds that ran calls, ")
                .append("and what it posts back (consumed counts; one acknowledgement per batch).\n\n");
        out.append("| column | size (B) | sender CPU ns | posts | WRs |").append(measuredWrs ? " WRs (verbs) | signaled | CQ polls |" : "")
                .append(" bytes | checks | receiver CPU ns | receiver posts |\n|---|---:|---:|---:|---:|")
                .append(measuredWrs ? "---:|---:|---:|" : "").append("---:|---:|---:|---:|\n");
        for (String column : List.of("write", "trad", "ovfl")) {
            for (int size : Payloads.SIZES) {
                double[] s = m.get("sender " + column + " " + size);
                double[] r = m.get("receiver " + column + " " + size);
                if (s == null || r == null) {
                    continue;
                }
                out.append(String.format(Locale.ROOT, "| %s | %d | %.1f | %.3f | %.3f |", column, size, s[0], s[1], s[2]));
                if (measuredWrs) {
                    out.append(String.format(Locale.ROOT, " %.3f | %.4f | %.3f |", s[5], s[6], s[7]));
                }
                out.append(String.format(Locale.ROOT, " %.1f | %.3f | %.1f | %.4f |%n", s[3], s[4], r[0], r[1]));
            }
        }
        out.append("\n## Projection onto NICs: calls/s per sender = min(10^9 / sender CPU ns, NIC rate / WRs)\n\n")
                .append(NIC_SOURCES).append(" One QP and one sending core; the rate is the NIC's, not one QP's, so ")
                .append("these are upper bounds where the NIC term decides. Seriema's Table 2 (ConnectX-3 Pro FDR, ")
                .append("MB/s converted at 10^6 B) beside it.\n\n| column | size (B) | CPU-bound calls/s |");
        NIC_RATES.keySet().forEach(n -> out.append(' ').append(n).append(" calls/s |"));
        out.append(" Seriema calls/s |\n|---|---:|---:|");
        NIC_RATES.keySet().forEach(n -> out.append("---:|"));
        out.append("---:|\n");
        for (String column : List.of("write", "trad", "ovfl")) {
            for (int i = 0; i < Payloads.SIZES.length; i++) {
                int size = Payloads.SIZES[i];
                double[] s = m.get("sender " + column + " " + size);
                if (s == null) {
                    continue;
                }
                double cpuRate = 1e9 / s[0];
                double wrs = measuredWrs && s[5] > 0 ? s[5] : s[2];
                out.append(String.format(Locale.ROOT, "| %s | %d | %s |", column, size, mega(cpuRate)));
                for (double nic : NIC_RATES.values()) {
                    out.append(' ').append(mega(Math.min(cpuRate, wrs > 0 ? nic / wrs : cpuRate))).append(" |");
                }
                out.append(' ').append(mega(SERIEMA.get(column)[i])).append(" |\n");
            }
        }
        out.append("\nRaw lines: ").append(lines.size()).append(" (").append(Arrays.toString(KEYS)).append(").\n");
        return out.toString();
    }

    private static String mega(double rate) {
        return String.format(Locale.ROOT, "%.1f M", rate / 1e6);
    }
}
