package io.fabricrpc.benchmarks.figure3;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The runs of each configuration and their medians, as Markdown. */
record Figure3Report(Map<String, List<Run>> runs, int cores, int board, double seconds, String note) {
    /** One job's steady rates (the phases after the first; NaN when the first phase outlasted the time limit). */
    record Run(int processes, int threads, String aggregation, long completions, long visits, double seconds,
               long startedAll, long completedAll, long rootVisits) {
        double visitsPerMs() {
            return visits / (seconds * 1000);
        }

        double completionsAndVisitsPerMs() {
            return (completions + visits) / (seconds * 1000);
        }

        static Run parse(String line) {
            Map<String, String> f = new HashMap<>();
            for (String part : line.trim().split("\\s+")) {
                int eq = part.indexOf('=');
                if (eq > 0) {
                    f.put(part.substring(0, eq), part.substring(eq + 1));
                }
            }
            return new Run(Integer.parseInt(f.get("processes")), Integer.parseInt(f.get("threads")), f.get("aggregation"),
                    Long.parseLong(f.get("steadyCompletions")), Long.parseLong(f.get("steadyVisits")),
                    Double.parseDouble(f.get("steadySeconds")), Long.parseLong(f.get("started")),
                    Long.parseLong(f.get("completed")), Long.parseLong(f.get("rootVisits")));
        }
    }

    /** The median of the values that are numbers (a run whose first phase never ended has no steady rate). */
    static double median(List<Double> values) {
        List<Double> v = new ArrayList<>(values.stream().filter(x -> !x.isNaN()).toList());
        v.sort(Double::compare);
        int n = v.size();
        return n == 0 ? 0 : n % 2 == 1 ? v.get(n / 2) : (v.get(n / 2 - 1) + v.get(n / 2)) / 2;
    }

    double medianVisits(String key) {
        return median(runs.get(key).stream().map(Run::visitsPerMs).toList());
    }

    double medianCompletionsAndVisits(String key) {
        return median(runs.get(key).stream().map(Run::completionsAndVisitsPerMs).toList());
    }

    String markdown(String png) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "Hex %dx%d from the empty board, %.0f s per run, rates over the phases "
                + "after the first, medians over interleaved rounds; machine: %d cores.%s%n%n", board, board, seconds,
                cores, note.isEmpty() ? "" : " " + note));
        sb.append("| configuration (P x T) | aggregation | cores | visits/ms | (completions + visits)/ms | runs: visits/ms "
                + "| every rollout completed once |\n| --- | --- | --- | --- | --- | --- | --- |\n");
        for (Map.Entry<String, List<Run>> e : runs.entrySet()) {
            Run first = e.getValue().getFirst();
            StringBuilder each = new StringBuilder();
            boolean exact = true;
            for (Run r : e.getValue()) {
                each.append(each.isEmpty() ? "" : " / ").append(r.visitsPerMs() > 0 || r.visitsPerMs() == 0
                        ? String.format(Locale.ROOT, "%.1f", r.visitsPerMs()) : "-");
                exact &= r.startedAll() == r.completedAll() && r.completedAll() == r.rootVisits();
            }
            sb.append(String.format(Locale.ROOT, "| %s | %s | %d | %.1f | %.1f | %s | %s |%n", e.getKey().split(" ")[0],
                    first.aggregation(), cores, medianVisits(e.getKey()), medianCompletionsAndVisits(e.getKey()), each,
                    exact ? "yes" : "NO"));
        }
        sb.append("\n\"-\": a run whose first phase outlasted the time limit (no steady rate; left out of the median).\n");
        sb.append("\n![Figure 3 on this machine](").append(png).append(")\n");
        return sb.toString();
    }
}
