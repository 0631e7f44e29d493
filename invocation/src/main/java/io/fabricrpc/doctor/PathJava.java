package io.fabricrpc.doctor;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code java} a shell finds first on its PATH, which is what a by-hand {@code java ...} command runs even when
 * the doctor itself runs on a JDK 25: an older one fails such a command with {@code UnsupportedClassVersionError}
 * or {@code Unrecognized option}. Reports OK for 25 and newer, else WARN with the fix: scripts/fabricrpc and
 * LocalLauncher's ranks still run, only a java typed by hand does not.
 */
public final class PathJava {
    public static final String CHECK = "path-java";
    static final String FIX = "put a JDK 25 first on PATH: export JAVA_HOME=/path/to/jdk-25 PATH=\"$JAVA_HOME/bin:$PATH\""
            + " (scripts/fabricrpc run and exec find one themselves)";
    private static final Pattern VERSION = Pattern.compile("version \"([0-9][^\"]*)\"");
    private static final long TIMEOUT_SECONDS = 10;

    private PathJava() {
    }

    /**
     * The feature version in the output of {@code java -version} ({@code 17} for "17.0.15", {@code 8} for
     * "1.8.0_392", {@code 26} for "26-ea"), or -1 if the output has no version.
     *
     * @param versionOutput what {@code java -version} printed (it prints to stderr)
     * @return the feature version, or -1
     */
    public static int feature(String versionOutput) {
        Matcher m = VERSION.matcher(versionOutput);
        if (!m.find()) {
            return -1;
        }
        String[] parts = m.group(1).split("[^0-9]+");
        if (parts.length == 0 || parts[0].isEmpty()) {
            return -1;
        }
        int first = Integer.parseInt(parts[0]);
        return first == 1 && parts.length > 1 ? Integer.parseInt(parts[1]) : first; // 1.8 is Java 8
    }

    /** The first executable {@code java} in the directories of {@code path} (a PATH value), if any. */
    public static Optional<Path> firstOnPath(String path) {
        for (String dir : path.split(":")) {
            Path java = Path.of(dir.isEmpty() ? "." : dir, "java");
            if (Files.isRegularFile(java) && Files.isExecutable(java)) {
                return Optional.of(java);
            }
        }
        return Optional.empty();
    }

    /** The check for a PATH value: runs {@code java -version} of its first java, bounded. */
    public static CheckResult check(String path) {
        Optional<Path> java = firstOnPath(path);
        if (java.isEmpty()) {
            return new CheckResult(CHECK, Status.WARN, "no java on PATH", FIX);
        }
        String output;
        try {
            Process p = new ProcessBuilder(java.get().toString(), "-version").redirectErrorStream(true).start();
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return new CheckResult(CHECK, Status.WARN, java.get() + " -version did not answer within "
                        + TIMEOUT_SECONDS + " s", FIX);
            }
            output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return new CheckResult(CHECK, Status.WARN, "cannot run " + java.get() + " -version: " + e.getMessage(), FIX);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new CheckResult(CHECK, Status.WARN, "interrupted while running " + java.get() + " -version", FIX);
        }
        return result(java.get(), output);
    }

    /** The verdict on a java's {@code -version} output. */
    static CheckResult result(Path java, String versionOutput) {
        int feature = feature(versionOutput);
        if (feature < 0) {
            return new CheckResult(CHECK, Status.WARN, java + " printed no version", FIX);
        }
        return feature >= 25
                ? CheckResult.ok(CHECK, java + " is Java " + feature)
                : new CheckResult(CHECK, Status.WARN, java + " is Java " + feature
                        + ": java commands typed by hand fail (UnsupportedClassVersionError, Unrecognized option)", FIX);
    }
}
