package io.fabricrpc.doctor;

import java.util.List;
import java.util.Locale;

/**
 * The results of one doctor run and their renderings. Exit status 1 if any check failed, else 0 (warnings and
 * skipped checks do not fail a run). Immutable.
 */
public record Report(String transport, List<CheckResult> checks) {
    public Report {
        checks = List.copyOf(checks);
    }

    public boolean failed() {
        return checks.stream().anyMatch(c -> c.status() == Status.FAIL);
    }

    public int exitStatus() {
        return failed() ? 1 : 0;
    }

    public long count(Status status) {
        return checks.stream().filter(c -> c.status() == status).count();
    }

    /** One line per check, then its fix indented below it when there is one. */
    public String toText() {
        int width = checks.stream().mapToInt(c -> c.name().length()).max().orElse(10);
        StringBuilder out = new StringBuilder("fabricrpc doctor: transport ").append(transport).append('\n');
        for (CheckResult c : checks) {
            out.append(String.format(Locale.ROOT, "  %-4s  %-" + width + "s  %s%n",
                    c.status().name(), c.name(), c.observed()));
            if (!c.fix().isEmpty()) {
                out.append(" ".repeat(width + 10)).append("fix: ").append(c.fix()).append('\n');
            }
        }
        out.append(String.format(Locale.ROOT, "%d ok, %d warn, %d fail, %d skip: %s%n", count(Status.OK),
                count(Status.WARN), count(Status.FAIL), count(Status.SKIP),
                failed() ? "this machine cannot run the job until the failures are fixed" : "ready"));
        return out.toString();
    }

    /** {"transport":..,"ok":bool,"exitStatus":n,"checks":[{"name","status","observed","fix"}...]} */
    public String toJson() {
        StringBuilder out = new StringBuilder("{\"transport\":").append(quote(transport))
                .append(",\"ok\":").append(!failed()).append(",\"exitStatus\":").append(exitStatus())
                .append(",\"checks\":[");
        for (int i = 0; i < checks.size(); i++) {
            CheckResult c = checks.get(i);
            out.append(i == 0 ? "" : ",").append("{\"name\":").append(quote(c.name()))
                    .append(",\"status\":").append(quote(c.status().label()))
                    .append(",\"observed\":").append(quote(c.observed()))
                    .append(",\"fix\":").append(quote(c.fix())).append('}');
        }
        return out.append("]}").toString();
    }

    static String quote(String s) {
        StringBuilder out = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char ch = s.charAt(i);
            switch (ch) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (ch < 0x20) {
                        out.append(String.format(Locale.ROOT, "\\u%04x", (int) ch));
                    } else {
                        out.append(ch);
                    }
                }
            }
        }
        return out.append('"').toString();
    }
}
