package io.fabricrpc.doctor;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Parsers of the {@code /proc} files the checks read. Pure functions of the text: malformed input yields empty
 * results, never an exception, because the files are read from a machine we do not control.
 */
public final class ProcFiles {
    /** A soft and hard resource limit; {@link #UNLIMITED} stands for "unlimited". */
    public record Limit(long soft, long hard) {
        public static final long UNLIMITED = -1;

        public boolean softUnlimited() {
            return soft == UNLIMITED;
        }
    }

    /** One mount of {@code /proc/self/mountinfo}. */
    public record Mount(String mountPoint, String fsType, String options, String superOptions) {
        /** Whether {@code option} is among the per-mount or super-block options. */
        public boolean has(String option) {
            return (',' + options + ',').contains(',' + option + ',')
                    || (',' + superOptions + ',').contains(',' + option + ',');
        }
    }

    /** Bit of CAP_IPC_LOCK in the capability masks of {@code /proc/self/status}. */
    static final int CAP_IPC_LOCK = 14;

    private ProcFiles() {
    }

    /** The row of {@code /proc/self/limits} whose name starts with {@code name}, e.g. "Max locked memory". */
    public static Optional<Limit> limit(String limitsText, String name) {
        for (String line : limitsText.split("\n")) {
            if (line.startsWith(name)) {
                String[] fields = line.substring(name.length()).trim().split("\\s+");
                if (fields.length >= 2) {
                    OptionalLong soft = limitValue(fields[0]);
                    OptionalLong hard = limitValue(fields[1]);
                    if (soft.isPresent() && hard.isPresent()) {
                        return Optional.of(new Limit(soft.getAsLong(), hard.getAsLong()));
                    }
                }
            }
        }
        return Optional.empty();
    }

    private static OptionalLong limitValue(String field) {
        if (field.equals("unlimited")) {
            return OptionalLong.of(Limit.UNLIMITED);
        }
        try {
            return OptionalLong.of(Long.parseLong(field));
        } catch (NumberFormatException e) {
            return OptionalLong.empty();
        }
    }

    /** Whether the effective capabilities in {@code /proc/self/status} include {@code bit}; empty if unknown. */
    public static Optional<Boolean> hasEffectiveCapability(String statusText, int bit) {
        for (String line : statusText.split("\n")) {
            if (line.startsWith("CapEff:")) {
                try {
                    long mask = Long.parseUnsignedLong(line.substring("CapEff:".length()).trim(), 16);
                    return Optional.of((mask & (1L << bit)) != 0);
                } catch (NumberFormatException e) {
                    return Optional.empty();
                }
            }
        }
        return Optional.empty();
    }

    /** {@code key: value [kB]} rows of {@code /proc/meminfo}, values in the file's unit. */
    public static Map<String, Long> meminfo(String text) {
        Map<String, Long> values = new HashMap<>();
        for (String line : text.split("\n")) {
            int colon = line.indexOf(':');
            if (colon > 0) {
                String[] fields = line.substring(colon + 1).trim().split("\\s+");
                try {
                    values.put(line.substring(0, colon).trim(), Long.parseLong(fields[0]));
                } catch (NumberFormatException ignored) {
                    // a row we do not need
                }
            }
        }
        return values;
    }

    /**
     * The mount of {@code /proc/self/mountinfo} that holds {@code absolutePath}: the longest mount point that is a
     * prefix of it, the last one listed when mounts are stacked (the visible one).
     */
    public static Optional<Mount> mountOf(String mountinfoText, String absolutePath) {
        Mount best = null;
        for (String line : mountinfoText.split("\n")) {
            String[] fields = line.trim().split(" ");
            int dash = java.util.Arrays.asList(fields).indexOf("-");
            if (dash < 6 || dash + 3 >= fields.length) {
                continue;
            }
            String point = unescape(fields[4]);
            if (!contains(point, absolutePath)) {
                continue;
            }
            if (best == null || point.length() >= best.mountPoint().length()) {
                best = new Mount(point, fields[dash + 1], fields[5], fields[dash + 3]);
            }
        }
        return Optional.ofNullable(best);
    }

    private static boolean contains(String mountPoint, String path) {
        return mountPoint.equals("/") || path.equals(mountPoint) || path.startsWith(mountPoint + "/");
    }

    /** mountinfo writes space, tab, newline and backslash as octal escapes (\040 ...). */
    private static String unescape(String field) {
        StringBuilder out = new StringBuilder(field.length());
        for (int i = 0; i < field.length(); i++) {
            char ch = field.charAt(i);
            if (ch == '\\' && i + 3 < field.length()
                    && field.substring(i + 1, i + 4).chars().allMatch(d -> d >= '0' && d <= '7')) {
                out.append((char) Integer.parseInt(field.substring(i + 1, i + 4), 8));
                i += 3;
            } else {
                out.append(ch);
            }
        }
        return out.toString();
    }
}
