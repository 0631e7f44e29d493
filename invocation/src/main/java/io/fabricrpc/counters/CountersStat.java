package io.fabricrpc.counters;

import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

/** Renders what {@link CountersFileReader} read, as the table {@code fabricrpc stat} prints or as one JSON object. */
public final class CountersStat {
    private CountersStat() {
    }

    /** True when every file was read (none was truncated, corrupt or of another version). */
    public static boolean allValid(List<CountersFileReader.Result> results) {
        return results.stream().allMatch(r -> r instanceof CountersFileReader.Snapshot);
    }

    public static String table(Path dir, List<CountersFileReader.Result> results) {
        StringBuilder out = new StringBuilder();
        if (results.isEmpty()) {
            return out.append("no counters files in ").append(dir).append(" (no job running here, or fabric.counters=false)")
                    .append(System.lineSeparator()).toString();
        }
        for (CountersFileReader.Result result : results) {
            switch (result) {
                case CountersFileReader.Failure f -> out.append("error: ").append(f.path()).append(": ").append(f.message())
                        .append(System.lineSeparator());
                case CountersFileReader.Snapshot s -> {
                    out.append(s.path().getFileName()).append("  rank ").append(s.rank()).append("  pid ").append(s.pid())
                            .append(s.alive() ? "" : " (GONE: process no longer runs)").append("  job ").append(s.jobId())
                            .append("  started ").append(s.startMillis() == 0 ? "?" : Instant.ofEpochMilli(s.startMillis()))
                            .append(System.lineSeparator());
                    for (CountersFileReader.Counter c : s.counters()) {
                        out.append(String.format("  %4d: %,20d - %s%n", c.id(), c.value(), c.label()));
                    }
                }
            }
        }
        return out.toString();
    }

    public static String json(Path dir, List<CountersFileReader.Result> results) {
        StringBuilder out = new StringBuilder("{\"directory\":").append(quote(dir.toString())).append(",\"files\":[");
        for (int i = 0; i < results.size(); i++) {
            if (i > 0) {
                out.append(',');
            }
            switch (results.get(i)) {
                case CountersFileReader.Failure f -> out.append("{\"path\":").append(quote(f.path().toString()))
                        .append(",\"error\":").append(quote(f.message())).append('}');
                case CountersFileReader.Snapshot s -> {
                    out.append("{\"path\":").append(quote(s.path().toString())).append(",\"pid\":").append(s.pid())
                            .append(",\"rank\":").append(s.rank()).append(",\"job\":").append(quote(s.jobId()))
                            .append(",\"startMillis\":").append(s.startMillis()).append(",\"alive\":").append(s.alive())
                            .append(",\"counters\":[");
                    for (int c = 0; c < s.counters().size(); c++) {
                        CountersFileReader.Counter counter = s.counters().get(c);
                        out.append(c > 0 ? "," : "").append("{\"id\":").append(counter.id()).append(",\"type\":")
                                .append(counter.typeId()).append(",\"label\":").append(quote(counter.label()))
                                .append(",\"value\":").append(counter.value()).append('}');
                    }
                    out.append("]}");
                }
            }
        }
        return out.append("]}").toString();
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20 || c > 0x7E) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
