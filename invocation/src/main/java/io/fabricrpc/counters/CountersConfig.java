package io.fabricrpc.counters;

import java.nio.file.Path;
import java.util.Map;

/**
 * Settings of the counters file, from the transport settings ({@code fabric.*}, {@code shm.*}) a job already has.
 *
 * @param enabled    {@code fabric.counters} (default true)
 * @param directory  {@code fabric.counters.dir} (default {@code <shm.dir>/fabricrpc-<user>/counters})
 * @param maxCounters {@code fabric.counters.max} (default 4096): counters the file has room for
 * @param periodMillis {@code fabric.counters.periodMillis} (default 100): how often the agent copies the counts
 * @param jmx        {@code fabric.jmx} (default true): the published counts also as a JMX MBean (with counters only)
 */
public record CountersConfig(boolean enabled, Path directory, int maxCounters, long periodMillis, boolean jmx) {
    public static final String ENABLED = "fabric.counters";
    public static final String DIRECTORY = "fabric.counters.dir";
    public static final String MAX_COUNTERS = "fabric.counters.max";
    public static final String PERIOD_MILLIS = "fabric.counters.periodMillis";
    public static final String JMX = "fabric.jmx";

    public CountersConfig {
        if (maxCounters < 16 || maxCounters > CountersFileDescriptor.MAX_COUNTERS) {
            throw new IllegalArgumentException(MAX_COUNTERS + " must be in [16, " + CountersFileDescriptor.MAX_COUNTERS
                    + "], got " + maxCounters);
        }
        if (periodMillis < 1) {
            throw new IllegalArgumentException(PERIOD_MILLIS + " must be at least 1, got " + periodMillis);
        }
    }

    public static CountersConfig from(Map<String, String> settings) {
        boolean enabled = bool(settings, ENABLED);
        String dir = settings.get(DIRECTORY);
        Path directory = dir != null && !dir.isBlank() ? Path.of(dir) : defaultDirectory(settings.get("shm.dir"));
        return new CountersConfig(enabled, directory, integer(settings, MAX_COUNTERS, 4096),
                integer(settings, PERIOD_MILLIS, 100), bool(settings, JMX));
    }

    private static boolean bool(Map<String, String> settings, String key) {
        String value = settings.getOrDefault(key, "true").trim();
        if (!value.equals("true") && !value.equals("false")) {
            throw new IllegalArgumentException(key + " must be true or false, got '" + value + "'");
        }
        return value.equals("true");
    }

    /** {@code <shmDir or /dev/shm>/fabricrpc-<user>/counters}: next to the shared-memory transport's files. */
    public static Path defaultDirectory(String shmDir) {
        String base = shmDir != null && !shmDir.isBlank() ? shmDir : "/dev/shm";
        return Path.of(base, "fabricrpc-" + user(), "counters");
    }

    static String user() {
        return new com.sun.security.auth.module.UnixSystem().getUsername().replaceAll("[^A-Za-z0-9._-]", "_");
    }

    private static int integer(Map<String, String> settings, String key, int fallback) {
        String value = settings.get(key);
        try {
            return value == null ? fallback : Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be an integer, got '" + value + "'");
        }
    }
}
