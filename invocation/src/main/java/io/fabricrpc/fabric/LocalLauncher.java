package io.fabricrpc.fabric;

import io.fabricrpc.api.JobConfig;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Starts a job of P JVMs on this machine, each running the same main class with the current JVM's {@code java}
 * binary and class path, and with {@code FABRICRPC_RANK}, {@code FABRICRPC_SIZE}, {@code FABRICRPC_THREADS},
 * {@code FABRICRPC_COORDINATOR} (127.0.0.1 and a free port) and a fresh random {@code FABRICRPC_JOB_SECRET} in
 * their environment, so {@link JobConfig#fromEnvironment()} works in them unchanged.
 *
 * <p>Each process's stdout and stderr are merged, kept (the last {@value #KEPT_LINES} lines) and, unless
 * disabled, forwarded to this JVM's stdout prefixed with {@code [rank N] }. {@link #awaitAll(Duration)} is the
 * supervisor: when one rank exits non-zero (and was not {@link RankProcess#kill() killed} on purpose) it kills the
 * others and throws with every rank's exit code and last lines. Every wait is bounded.
 *
 * <p>Every rank gets the JVM flags fabricrpc needs on JDK 25 ({@link #REQUIRED_JVM_FLAGS}: Agrona and DiSNI
 * reach into {@code jdk.internal.misc} and {@code sun.nio.ch}; without them a rank dies with
 * {@code IllegalAccessError}), then this JVM's fabric settings ({@link #forwardedSettings()}), then the flags given
 * with {@link Builder#jvmArgs}, so the builder and the command line configure ranks alike.
 *
 * <p>From the command line (the ranks also inherit this JVM's module, native-access and JIT flags and its
 * {@code fabric.jit.directives} setting, see {@link #inheritedJvmFlags()}):
 * <pre>{@code
 * java @fabricrpc.jvmargs -cp <classpath> io.fabricrpc.fabric.LocalLauncher [-n P] [-t T] [--timeout SECONDS] \
 *      <main class> [args...]
 * }</pre>
 * where {@code fabricrpc.jvmargs} is this jar's {@code META-INF/fabricrpc.jvmargs} (the four flags), or
 * {@code scripts/fabricrpc run [-n P] ... -cp <classpath> <main class>}.
 * It exits 0 if every rank did.
 *
 * <p>Thread-safe.
 */
public final class LocalLauncher implements AutoCloseable {

    static final int KEPT_LINES = 10_000;

    /**
     * JVM flags every rank is started with: native access for the memory API and DiSNI, Agrona's Unsafe access, and
     * the two packages Agrona and DiSNI read on JDK 25 (the same as the root pom's fabricrpc.jvm.flags).
     */
    public static final List<String> REQUIRED_JVM_FLAGS = List.of("--enable-native-access=ALL-UNNAMED",
        "--sun-misc-unsafe-memory-access=allow", "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
        "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED");
    private static final long POLL_MILLIS = 10;

    /** The job failed: a rank exited non-zero, a wait timed out, or a process could not be started. */
    public static final class LaunchException extends RuntimeException {
        public LaunchException(String message) {
            super(message);
        }
    }

    /** One rank's process. Thread-safe. */
    public static final class RankProcess {
        private final int rank;
        private final Process process;
        private final ArrayDeque<String> lines = new ArrayDeque<>();
        private volatile boolean killedOnPurpose;
        /** Guarded by {@code lines}. */
        private boolean readerDone;

        private RankProcess(int rank, Process process) {
            this.rank = rank;
            this.process = process;
        }

        public int rank() {
            return rank;
        }

        public long pid() {
            return process.pid();
        }

        public Process process() {
            return process;
        }

        public boolean isAlive() {
            return process.isAlive();
        }

        /** Kills the process (SIGKILL, as a crash would) and does not report its exit as a job failure. */
        public void kill() {
            killedOnPurpose = true;
            process.destroyForcibly();
        }

        public boolean wasKilled() {
            return killedOnPurpose;
        }

        /** Exit code, or -1 while running. */
        public int exitCode() {
            return process.isAlive() ? -1 : process.exitValue();
        }

        /** The kept output lines so far. */
        public List<String> output() {
            synchronized (lines) {
                return List.copyOf(lines);
            }
        }

        /**
         * Waits for an output line matching {@code match} (including lines already printed).
         *
         * @throws LaunchException if the process exits or the timeout passes first
         */
        public String awaitLine(Predicate<String> match, Duration timeout) {
            long deadline = System.nanoTime() + timeout.toNanos();
            synchronized (lines) {
                while (true) {
                    for (String l : lines) {
                        if (match.test(l)) {
                            return l;
                        }
                    }
                    long left = deadline - System.nanoTime();
                    if (left <= 0 || (!process.isAlive() && readerDone)) {
                        throw new LaunchException("rank " + rank + (process.isAlive() ? " printed no matching line within "
                            + timeout.toMillis() + " ms" : " exited (code " + process.exitValue()
                            + ") without printing a matching line") + "; last lines:\n" + tail(10));
                    }
                    try {
                        lines.wait(Math.max(1, Math.min(left / 1_000_000, 50)));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new LaunchException("interrupted while waiting for rank " + rank);
                    }
                }
            }
        }

        private void pump(PrintStream forward) {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    if (forward != null) {
                        forward.println("[rank " + rank + "] " + line);
                    }
                    synchronized (lines) {
                        if (lines.size() == KEPT_LINES) {
                            lines.removeFirst();
                        }
                        lines.addLast(line);
                        lines.notifyAll();
                    }
                }
            } catch (IOException e) {
                // The process died; its output ends here.
            } finally {
                synchronized (lines) {
                    readerDone = true;
                    lines.notifyAll();
                }
            }
        }

        String tail(int n) {
            List<String> all = output();
            return String.join("\n", all.subList(Math.max(0, all.size() - n), all.size()));
        }
    }

    private final List<RankProcess> processes;
    private final int coordinatorPort;

    private LocalLauncher(List<RankProcess> processes, int coordinatorPort) {
        this.processes = List.copyOf(processes);
        this.coordinatorPort = coordinatorPort;
    }

    public static Builder builder(Class<?> mainClass) {
        return new Builder(mainClass.getName());
    }

    public static Builder builder(String mainClass) {
        return new Builder(mainClass);
    }

    public int size() {
        return processes.size();
    }

    public int coordinatorPort() {
        return coordinatorPort;
    }

    public RankProcess process(int rank) {
        return processes.get(rank);
    }

    public List<RankProcess> processes() {
        return processes;
    }

    /**
     * Waits until every process exited. Exits of processes killed with {@link RankProcess#kill()} are expected.
     *
     * @throws LaunchException (after killing the remaining processes) if a rank exits non-zero or the timeout
     *                         passes; the message has every rank's state and last lines
     */
    public void awaitAll(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            boolean anyAlive = false;
            for (RankProcess p : processes) {
                if (p.isAlive()) {
                    anyAlive = true;
                } else if (p.exitCode() != 0 && !p.killedOnPurpose) {
                    close();
                    throw new LaunchException("rank " + p.rank + " exited with code " + p.exitCode()
                        + "; killed the others.\n" + report());
                }
            }
            if (!anyAlive) {
                return;
            }
            if (System.nanoTime() > deadline) {
                close();
                throw new LaunchException("job still running after " + timeout.toMillis() + " ms; killed it.\n"
                    + report());
            }
            try {
                Thread.sleep(POLL_MILLIS);
            } catch (InterruptedException e) {
                close();
                Thread.currentThread().interrupt();
                throw new LaunchException("interrupted; killed the job");
            }
        }
    }

    /** Every rank's pid, state and last lines. */
    public String report() {
        StringBuilder sb = new StringBuilder();
        for (RankProcess p : processes) {
            sb.append("rank ").append(p.rank).append(" pid ").append(p.pid()).append(": ")
                .append(p.isAlive() ? "running" : "exit " + p.exitCode() + (p.killedOnPurpose ? " (killed)" : ""))
                .append('\n').append(p.tail(5).indent(4));
        }
        return sb.toString();
    }

    /** Kills every process still running (SIGKILL) and waits for them, at most 5 s. Idempotent. */
    @Override
    public void close() {
        for (RankProcess p : processes) {
            if (p.isAlive()) {
                p.killedOnPurpose = true;
                p.process.destroyForcibly();
            }
        }
        long deadline = System.nanoTime() + 5_000_000_000L;
        for (RankProcess p : processes) {
            try {
                p.process.waitFor(Math.max(0, deadline - System.nanoTime()), java.util.concurrent.TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Launch parameters. Not thread-safe. */
    public static final class Builder {
        private final String mainClass;
        private int processes = -1;
        private int threadsPerProcess = 1;
        private int coordinatorPort;
        private final List<String> jvmArgs = new ArrayList<>(REQUIRED_JVM_FLAGS);
        private final List<String> args = new ArrayList<>();
        private final Map<String, String> env = new LinkedHashMap<>();
        private boolean forwardOutput = true;
        private boolean forwardSettings = true;

        private Builder(String mainClass) {
            this.mainClass = mainClass;
        }

        public Builder processes(int p) {
            this.processes = p;
            return this;
        }

        public Builder threadsPerProcess(int t) {
            this.threadsPerProcess = t;
            return this;
        }

        /** Coordinator port; 0 (default) picks a free loopback port. */
        public Builder coordinatorPort(int port) {
            this.coordinatorPort = port;
            return this;
        }

        /**
         * Extra JVM options, after {@link #REQUIRED_JVM_FLAGS}; a repeat of one of those is dropped, so callers may
         * pass {@link #inheritedJvmFlags()} as they are.
         */
        public Builder jvmArgs(String... a) {
            for (String arg : a) {
                if (!REQUIRED_JVM_FLAGS.contains(arg)) {
                    jvmArgs.add(arg);
                }
            }
            return this;
        }

        public Builder args(String... a) {
            args.addAll(Arrays.asList(a));
            return this;
        }

        /** An extra environment variable for every rank (e.g. {@code FABRICRPC_FAILURE_TIMEOUT_MS}). */
        public Builder env(String name, String value) {
            env.put(name, value);
            return this;
        }

        /**
         * Pass this JVM's fabric settings on to the ranks (default true): {@link #forwardedSettings()}, read when
         * {@link #start()} runs. A flag given with {@link #jvmArgs} for the same key wins.
         */
        public Builder forwardSettings(boolean forward) {
            this.forwardSettings = forward;
            return this;
        }

        /** Forward output to this JVM's stdout with a rank prefix (default true); it is kept either way. */
        public Builder forwardOutput(boolean forward) {
            this.forwardOutput = forward;
            return this;
        }

        /**
         * Starts the P processes.
         *
         * @throws LaunchException if a process cannot be started (the ones started are killed)
         */
        public LocalLauncher start() {
            if (processes < 1) {
                throw new IllegalArgumentException("processes must be >= 1, got " + processes);
            }
            int port = coordinatorPort != 0 ? coordinatorPort : freeLoopbackPort();
            byte[] secretBytes = new byte[32];
            new SecureRandom().nextBytes(secretBytes);
            String secret = HexFormat.of().formatHex(secretBytes);
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            List<String> settings = forwardSettings ? forwardedSettings() : List.of();
            List<RankProcess> started = new ArrayList<>();
            try {
                for (int r = 0; r < processes; r++) {
                    List<String> cmd = new ArrayList<>();
                    cmd.add(java);
                    // Required flags, then the settings, then the caller's flags: the last -D of a key wins.
                    cmd.addAll(REQUIRED_JVM_FLAGS);
                    cmd.addAll(settings);
                    cmd.addAll(jvmArgs.subList(REQUIRED_JVM_FLAGS.size(), jvmArgs.size()));
                    cmd.add("-cp");
                    cmd.add(System.getProperty("java.class.path"));
                    cmd.add(mainClass);
                    cmd.addAll(args);
                    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
                    Map<String, String> e = pb.environment();
                    // The parent's own job settings must not leak into the children.
                    e.keySet().removeIf(k -> k.startsWith("FABRICRPC_") || k.startsWith("SLURM_")
                        || k.startsWith("OMPI_COMM_WORLD_"));
                    e.putAll(env);
                    e.put(JobConfig.ENV_RANK, Integer.toString(r));
                    e.put(JobConfig.ENV_SIZE, Integer.toString(processes));
                    e.put(JobConfig.ENV_THREADS, Integer.toString(threadsPerProcess));
                    e.put(JobConfig.ENV_LOCAL_RANK, Integer.toString(r));
                    e.put(JobConfig.ENV_COORDINATOR, "127.0.0.1:" + port);
                    e.put(JobConfig.ENV_JOB_SECRET, secret);
                    RankProcess p = new RankProcess(r, pb.start());
                    started.add(p);
                    PrintStream forward = forwardOutput ? System.out : null;
                    Thread t = new Thread(() -> p.pump(forward), "fabricrpc-launcher-rank-" + r);
                    t.setDaemon(true);
                    t.start();
                }
            } catch (IOException e) {
                new LocalLauncher(started, port).close();
                throw new LaunchException("cannot start rank " + started.size() + " of " + mainClass + ": " + e);
            }
            return new LocalLauncher(started, port);
        }
    }

    /**
     * Prefixes of the flags this JVM was started with that child JVMs of the same program need too: module and
     * native-access flags, the JIT tier limit ({@code -XX:TieredStopAtLevel}, which an emulated machine may need to
     * keep C2 away from its JIT bugs), and what a comparison of JIT settings varies: the optional flags of the root
     * pom's fabricrpc.jit.flags ({@code -XX:Tier3DelayOn}, {@code -XX:CompileCommand}, kept in order: {@code quiet}
     * must come first), and the fabric's own settings as system properties ({@code -Dfabric.*}, {@code -Dshm.*},
     * {@code -Drdma.*}, {@code -Dhybrid.*}, {@code -Dfabricrpc.*}), which ranks read as a job's configuration.
     */
    private static final java.util.List<String> INHERITED_FLAG_PREFIXES = java.util.List.of("--add-",
            "--enable-native-access", "--sun-misc", "-XX:TieredStopAtLevel=", "-XX:Tier3DelayOn=",
            "-XX:CompileCommand=", "-Dfabric.", "-Dshm.", "-Drdma.", "-Dhybrid.", "-Dfabricrpc.");

    /** System-property prefixes of the settings ranks read as their job's configuration. */
    private static final List<String> SETTING_PREFIXES = List.of("fabric.", "shm.", "rdma.", "hybrid.", "fabricrpc.");

    /**
     * This JVM's system properties a rank reads as its job's configuration ({@code fabric.*}, {@code shm.*},
     * {@code rdma.*}, {@code hybrid.*}, {@code fabricrpc.*}), as {@code -Dkey=value} flags sorted by key; set on the
     * command line or with {@link System#setProperty} alike.
     *
     * @return the flags, empty if there are none
     */
    public static List<String> forwardedSettings() {
        java.util.Properties properties = System.getProperties();
        return properties.stringPropertyNames().stream()
                .filter(k -> SETTING_PREFIXES.stream().anyMatch(k::startsWith))
                .sorted()
                .map(k -> "-D" + k + "=" + properties.getProperty(k))
                .toList();
    }

    /** This JVM's flags that start with one of {@link #INHERITED_FLAG_PREFIXES}, in their order. */
    public static java.util.List<String> inheritedJvmFlags() {
        return java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .filter(a -> INHERITED_FLAG_PREFIXES.stream().anyMatch(a::startsWith))
                .toList();
    }

    /** A currently free loopback port (the coordinator binds it moments later). */
    static int freeLoopbackPort() {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free loopback port", e);
        }
    }

    /** {@code LocalLauncher [-n P] [-t T] [--timeout SECONDS] <main class> [args...]}. */
    public static void main(String[] argv) {
        int p = 2;
        int t = 1;
        long timeoutSeconds = 3600;
        int i = 0;
        while (i < argv.length && argv[i].startsWith("-")) {
            switch (argv[i]) {
                case "-n" -> p = Integer.parseInt(argv[++i]);
                case "-t" -> t = Integer.parseInt(argv[++i]);
                case "--timeout" -> timeoutSeconds = Long.parseLong(argv[++i]);
                default -> usage("unknown option " + argv[i]);
            }
            i++;
        }
        if (i >= argv.length) {
            usage("missing main class");
        }
        try (LocalLauncher job = builder(argv[i]).processes(p).threadsPerProcess(t)
            .jvmArgs(inheritedJvmFlags().toArray(String[]::new))
            .args(Arrays.copyOfRange(argv, i + 1, argv.length)).start()) {
            job.awaitAll(Duration.ofSeconds(timeoutSeconds));
        } catch (LaunchException e) {
            System.err.println(e.getMessage());
            System.exit(1);
        }
    }

    private static void usage(String problem) {
        System.err.println(problem + "\nusage: LocalLauncher [-n P] [-t T] [--timeout SECONDS] <main class> [args...]");
        System.exit(2);
    }
}
