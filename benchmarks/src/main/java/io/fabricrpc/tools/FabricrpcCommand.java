package io.fabricrpc.tools;

import io.fabricrpc.counters.CountersConfig;
import io.fabricrpc.counters.CountersFileReader;
import io.fabricrpc.counters.CountersStat;
import io.fabricrpc.doctor.Doctor;
import io.fabricrpc.doctor.DoctorContext;
import io.fabricrpc.doctor.Report;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code fabricrpc}: operator commands (scripts/fabricrpc): {@code doctor} and {@code stat}. Lives in the benchmarks
 * module because its shaded jar is the one artifact holding every module (and so every DoctorCheckProvider) and
 * picocli. Exit status: 0 when no check failed (every counters file read), 1 when one did, 2 for a usage error.
 */
@Command(name = "fabricrpc", subcommands = {FabricrpcCommand.DoctorCommand.class, FabricrpcCommand.StatCommand.class},
        description = "fabricrpc operator commands.")
public final class FabricrpcCommand implements Runnable {
    @Option(names = {"-h", "--help"}, usageHelp = true, description = "show this help and exit")
    boolean help;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        System.exit(execute(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args));
    }

    /** Runs the command line with the given streams and returns the exit status. */
    public static int execute(PrintWriter out, PrintWriter err, String... args) {
        return new CommandLine(new FabricrpcCommand()).setOut(out).setErr(err).execute(args);
    }

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** Runs every check and prints each with its fix. */
    @Command(name = "doctor",
            description = {"Checks what a fabricrpc job needs on this machine and prints the fix for each failing check.",
                    "Exit status 0 when every check is ok, warn or skip; 1 when one fails."})
    static final class DoctorCommand implements Callable<Integer> {
        enum Kind { shm, rdma, hybrid }

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = {"-h", "--help"}, usageHelp = true, description = "show this help and exit")
        boolean help;

        @Option(names = "--json", description = "print the results as one JSON object")
        boolean json;

        @Option(names = "--peer", paramLabel = "HOST[:PORT]",
                description = "probe this peer over rdma_cm (bounded by rdma.connectTimeoutMillis); skipped otherwise")
        String peer;

        @Option(names = "--transport", paramLabel = "shm|rdma|hybrid",
                description = "transport to check for (default: -Dfabric.transport, else shm)")
        Kind transport;

        @Override
        public Integer call() {
            Map<String, String> settings = new HashMap<>();
            // The same keys FabricConfig copies from system properties, so -Dshm.dir=... applies here too.
            System.getProperties().forEach((k, v) -> {
                String key = k.toString();
                if (key.startsWith("fabric.") || key.startsWith("shm.") || key.startsWith("rdma.")
                        || key.startsWith("memory.")) {
                    settings.put(key, v.toString());
                }
            });
            String kind = transport != null ? transport.name() : settings.getOrDefault("fabric.transport", "shm");
            DoctorContext ctx;
            try {
                ctx = Doctor.contextFor(kind, settings, Optional.ofNullable(peer));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
            Report report = Doctor.run(ctx);
            PrintWriter out = spec.commandLine().getOut();
            out.print(json ? report.toJson() + System.lineSeparator() : report.toText());
            out.flush();
            return report.exitStatus();
        }
    }

    /** Prints the counters of this host's running jobs, refreshing, from their counters files. */
    @Command(name = "stat",
            description = {"Prints the counters of the fabricrpc jobs running on this host (one file per process),",
                    "refreshing every --interval; files of processes that are gone are marked.",
                    "Exit status 0 when every file was read, 1 when one was truncated, corrupt or of another version."})
    static final class StatCommand implements Callable<Integer> {
        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Option(names = {"-h", "--help"}, usageHelp = true, description = "show this help and exit")
        boolean help;

        @Option(names = "--dir", paramLabel = "DIR",
                description = "counters directory (default: -Dfabric.counters.dir, else <shm.dir>/fabricrpc-<user>/counters)")
        Path dir;

        @Option(names = "--interval", paramLabel = "MS", defaultValue = "1000", description = "refresh period (default 1000)")
        long intervalMillis;

        @Option(names = "--count", paramLabel = "N", defaultValue = "0",
                description = "print N snapshots, then exit (default: until interrupted)")
        int count;

        @Option(names = "--json", description = "print one snapshot as one JSON object and exit")
        boolean json;

        @Override
        public Integer call() throws InterruptedException {
            if (intervalMillis < 1 || count < 0) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--interval must be >= 1 and --count >= 0");
            }
            Path directory = dir != null ? dir : CountersConfig.from(settings()).directory();
            PrintWriter out = spec.commandLine().getOut();
            boolean valid = true;
            for (int printed = 0; json ? printed < 1 : count == 0 || printed < count; printed++) {
                if (printed > 0) {
                    Thread.sleep(intervalMillis);
                }
                List<CountersFileReader.Result> results;
                try {
                    results = CountersFileReader.readDirectory(directory);
                } catch (IOException e) {
                    spec.commandLine().getErr().println("error: cannot list " + directory + ": " + e.getMessage());
                    spec.commandLine().getErr().flush();
                    return 1;
                }
                valid = CountersStat.allValid(results);
                if (json) {
                    out.println(CountersStat.json(directory, results));
                } else {
                    out.print((printed > 0 ? System.lineSeparator() : "") + "-- " + java.time.LocalTime.now().withNano(0)
                            + " " + directory + System.lineSeparator() + CountersStat.table(directory, results));
                }
                out.flush();
            }
            return valid ? 0 : 1;
        }

        private static Map<String, String> settings() {
            Map<String, String> settings = new HashMap<>();
            System.getProperties().forEach((k, v) -> {
                if (k.toString().startsWith("fabric.") || k.toString().startsWith("shm.")) {
                    settings.put(k.toString(), v.toString());
                }
            });
            return settings;
        }
    }
}
