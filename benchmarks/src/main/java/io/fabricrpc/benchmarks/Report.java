package io.fabricrpc.benchmarks;

import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/** The results of a run as Markdown (the committed results file) and as a console summary. */
public record Report(Machine machine, double loadBefore, double loadAfter, String parameters, String note,
              List<PlacementResult> placements) {
    static final double CROSS_PROCESS_TARGET = 2.0;

    /** What the numbers were measured on. */
    public record Machine(String cpu, int logicalCpus, boolean virtualised, String memory, String kernel, String jdk,
                   String gc, Instant date) {
        /** The "## Machine" section of a report: what ran the benchmark and how loaded it was. */
        public void appendMarkdown(StringBuilder md, double loadBefore, double loadAfter) {
            md.append("## Machine\n\n");
            md.append("- Date: ").append(date()).append('\n');
            md.append("- CPU: ").append(cpu()).append(", ").append(logicalCpus())
                    .append(" logical CPUs visible to the JVM").append(virtualised() ? " (virtualised)" : "").append('\n');
            md.append("- Memory: ").append(memory()).append('\n');
            md.append("- Kernel: ").append(kernel()).append('\n');
            md.append("- JDK: ").append(jdk()).append("; GC: ").append(gc()).append('\n');
            md.append("- 1-minute load average: ").append(fmt(loadBefore)).append(" at start, ").append(fmt(loadAfter))
                    .append(" at end\n\n");
        }

        public static Machine describe() {
            String cpuinfo = read("/proc/cpuinfo");
            String cpu = cpuinfo.lines().filter(l -> l.startsWith("model name")).findFirst()
                    .map(l -> l.substring(l.indexOf(':') + 1).trim()).orElse("unknown (no /proc/cpuinfo model name)");
            boolean virtualised = cpuinfo.lines().anyMatch(l -> l.startsWith("flags") && l.contains(" hypervisor"));
            String memory = read("/proc/meminfo").lines().filter(l -> l.startsWith("MemTotal:")).findFirst()
                    .map(l -> String.format(Locale.ROOT, "%.1f GiB",
                            Long.parseLong(l.replaceAll("[^0-9]", "")) / 1024.0 / 1024.0))
                    .orElse("unknown");
            String kernel = System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                    + System.getProperty("os.arch");
            String jdk = System.getProperty("java.vm.vendor") + " " + System.getProperty("java.vm.name") + " "
                    + System.getProperty("java.runtime.version");
            String gc = ManagementFactory.getGarbageCollectorMXBeans().stream().map(GarbageCollectorMXBean::getName)
                    .collect(Collectors.joining(", "));
            return new Machine(cpu, Runtime.getRuntime().availableProcessors(), virtualised, memory, kernel, jdk, gc,
                    Instant.now().truncatedTo(ChronoUnit.SECONDS));
        }

        /** The 1-minute load average, or NaN where /proc/loadavg is missing. */
        public static double loadAverage() {
            String text = read("/proc/loadavg").trim();
            try {
                return Double.parseDouble(text.split("\\s+")[0]);
            } catch (RuntimeException e) {
                return Double.NaN;
            }
        }

        private static String read(String file) {
            try {
                return Files.readString(Path.of(file));
            } catch (IOException | RuntimeException e) {
                return "";
            }
        }
    }

    String markdown() {
        StringBuilder md = new StringBuilder();
        md.append("# Mailbox round trip vs Agrona ring-buffer ping-pong\n\n");
        md.append("Written by `benchmarks/run-mailbox-bench.sh` (`io.fabricrpc.benchmarks.MailboxRttBenchmark`); overwritten"
                + " by every run. Ratios are mailbox / Agrona per round (the two ran back to back in the same round),"
                + " then the median over rounds: below 1 the mailbox is faster for RTT, above 1 it does more calls/s.\n\n");
        machine.appendMarkdown(md, loadBefore, loadAfter);
        md.append("## Parameters\n\n").append(parameters).append(".\n\n");
        md.append("## Summary (median of per-round ratios, mailbox / Agrona)\n\n");
        md.append(summaryTable()).append('\n');
        md.append(targetsText()).append('\n');
        for (PlacementResult p : placements) {
            md.append("## ").append(capitalize(p.label())).append("\n\n");
            md.append("Medians over rounds (RTT in ns; B/call = bytes the thread allocated during the measured rounds"
                    + " / calls):\n\n");
            md.append("| system | p50 RTT | p99 RTT | calls/s | client B/call | echo B/call |\n");
            md.append("|---|---:|---:|---:|---:|---:|\n");
            md.append(systemRow("mailbox (open/send/recv/close)", p.mailbox()));
            md.append(systemRow("Agrona OneToOneRingBuffer ping-pong", p.agrona()));
            md.append("| **ratio** (median of per-round ratios) | **").append(ratio(p.p50Ratio())).append("** | **")
                    .append(ratio(p.p99Ratio())).append("** | **").append(ratio(p.throughputRatio()))
                    .append("** | | |\n\n");
            md.append("Spread of the per-round ratios (min .. max): p50 ").append(spread(p.ratios(m -> m.p50Nanos())))
                    .append(", p99 ").append(spread(p.ratios(m -> m.p99Nanos()))).append(", calls/s ")
                    .append(spread(p.ratios(Measurement::callsPerSecond))).append(".\n\n");
            md.append("| round | first | mailbox p50 | mailbox p99 | mailbox calls/s | Agrona p50 | Agrona p99 |"
                    + " Agrona calls/s | p50 ratio | p99 ratio | calls/s ratio |\n");
            md.append("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
            for (int i = 0; i < p.mailbox().size(); i++) {
                Measurement m = p.mailbox().get(i);
                Measurement a = p.agrona().get(i);
                md.append("| ").append(i).append(" | ").append(p.mailboxFirst().get(i) ? "mailbox" : "Agrona")
                        .append(" | ").append(m.p50Nanos()).append(" | ").append(m.p99Nanos()).append(" | ")
                        .append(count(m.callsPerSecond())).append(" | ").append(a.p50Nanos()).append(" | ")
                        .append(a.p99Nanos()).append(" | ").append(count(a.callsPerSecond())).append(" | ")
                        .append(ratio((double) m.p50Nanos() / a.p50Nanos())).append(" | ")
                        .append(ratio((double) m.p99Nanos() / a.p99Nanos())).append(" | ")
                        .append(ratio(m.callsPerSecond() / a.callsPerSecond())).append(" |\n");
            }
            md.append("\nBytes allocated per measured round (client thread, echo thread) and calls:\n\n");
            md.append("| round | mailbox client B | mailbox echo B | mailbox calls | Agrona client B | Agrona echo B |"
                    + " Agrona calls |\n");
            md.append("|---:|---:|---:|---:|---:|---:|---:|\n");
            for (int i = 0; i < p.mailbox().size(); i++) {
                Measurement m = p.mailbox().get(i);
                Measurement a = p.agrona().get(i);
                md.append("| ").append(i).append(" | ").append(m.clientBytes()).append(" | ").append(m.echoBytes())
                        .append(" | ").append(m.calls()).append(" | ").append(a.clientBytes()).append(" | ")
                        .append(a.echoBytes()).append(" | ").append(a.calls()).append(" |\n");
            }
            md.append('\n');
        }
        if (note != null && !note.isBlank()) {
            md.append("## Notes\n\n").append(note.strip()).append('\n');
        }
        return md.toString();
    }

    String summary() {
        return "Mailbox vs Agrona ping-pong (" + parameters + ")\n" + summaryTable() + targetsText();
    }

    private String summaryTable() {
        StringBuilder t = new StringBuilder();
        t.append("| placement | mailbox p50 / p99 (ns) | Agrona p50 / p99 (ns) | p50 ratio | p99 ratio | calls/s ratio |"
                + " mailbox B/call (client, echo) | Agrona B/call (client, echo) |\n");
        t.append("|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (PlacementResult p : placements) {
            t.append("| ").append(p.label()).append(" | ")
                    .append(count(PlacementResult.median(p.mailbox(), m -> m.p50Nanos()))).append(" / ")
                    .append(count(PlacementResult.median(p.mailbox(), m -> m.p99Nanos()))).append(" | ")
                    .append(count(PlacementResult.median(p.agrona(), m -> m.p50Nanos()))).append(" / ")
                    .append(count(PlacementResult.median(p.agrona(), m -> m.p99Nanos()))).append(" | ")
                    .append(ratio(p.p50Ratio())).append(" | ").append(ratio(p.p99Ratio())).append(" | ")
                    .append(ratio(p.throughputRatio())).append(" | ")
                    .append(bytes(PlacementResult.clientBytesPerCall(p.mailbox()))).append(", ")
                    .append(bytes(PlacementResult.echoBytesPerCall(p.mailbox()))).append(" | ")
                    .append(bytes(PlacementResult.clientBytesPerCall(p.agrona()))).append(", ")
                    .append(bytes(PlacementResult.echoBytesPerCall(p.agrona()))).append(" |\n");
        }
        return t.toString();
    }

    private String targetsText() {
        StringBuilder t = new StringBuilder();
        for (PlacementResult p : placements) {
            if (p.crossProcess()) {
                t.append("Target, cross-process round trip within ").append(ratio(CROSS_PROCESS_TARGET))
                        .append(" of Agrona, idle ").append(p.idle().name().toLowerCase()).append(": p50 ratio ").append(ratio(p.p50Ratio()))
                        .append(p.p50Ratio() <= CROSS_PROCESS_TARGET ? " (met)" : " (NOT met)")
                        .append(", p99 ratio ").append(ratio(p.p99Ratio()))
                        .append(p.p99Ratio() <= CROSS_PROCESS_TARGET ? " (met)" : " (NOT met)").append(".\n");
            }
        }
        boolean zero = placements.stream().allMatch(p -> PlacementResult.clientBytesPerCall(p.mailbox()) == 0
                && PlacementResult.echoBytesPerCall(p.mailbox()) == 0);
        t.append("Target, zero bytes allocated per mailbox call in steady state (client and echo thread): ")
                .append(zero ? "met" : "NOT met").append(".\n");
        return t.toString();
    }

    private static String systemRow(String name, List<Measurement> rounds) {
        return "| " + name + " | " + count(PlacementResult.median(rounds, m -> m.p50Nanos())) + " | "
                + count(PlacementResult.median(rounds, m -> m.p99Nanos())) + " | "
                + count(PlacementResult.median(rounds, Measurement::callsPerSecond)) + " | "
                + bytes(PlacementResult.clientBytesPerCall(rounds)) + " | " + bytes(PlacementResult.echoBytesPerCall(rounds))
                + " |\n";
    }

    private static String spread(double[] ratios) {
        double[] sorted = ratios.clone();
        Arrays.sort(sorted);
        return ratio(sorted[0]) + " .. " + ratio(sorted[sorted.length - 1]);
    }

    private static String ratio(double value) {
        return String.format(Locale.ROOT, "%.2fx", value);
    }

    private static String count(double value) {
        return String.format(Locale.ROOT, "%,.0f", value);
    }

    private static String bytes(double value) {
        return value == 0 ? "0" : String.format(Locale.ROOT, "%.3f", value);
    }

    private static String fmt(double value) {
        return String.format(Locale.ROOT, "%.2f", value);
    }

    private static String capitalize(String s) {
        return s.isEmpty() ? s : Character.toUpperCase(s.charAt(0)) + s.substring(1);
    }
}
