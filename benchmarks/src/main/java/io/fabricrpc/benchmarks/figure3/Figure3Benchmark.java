package io.fabricrpc.benchmarks.figure3;

import io.fabricrpc.fabric.LocalLauncher;
import io.fabricrpc.mcts.hex.HexMcts;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * Seriema's Figure 3 on this machine: visits/ms and (completions + visits)/ms of the Hex MCTS per configuration
 * (processes × threads) and aggregation, each configuration a fresh job of {@link HexMcts} started by
 * {@link LocalLauncher}. Configurations run interleaved (round 1: every one, round 2: every one, …) because this VM
 * swings between runs; rates are over the phases after the first (JIT warm-up), medians over rounds.
 * {@code --extra file=label} adds {@code MCTS_RESULT} lines measured elsewhere (the two-guest RDMA run), one
 * configuration per label and aggregation.
 */
@Command(name = "figure3", mixinStandardHelpOptions = true, description = "Seriema Figure 3: MCTS scaling")
public final class Figure3Benchmark implements Callable<Integer> {
    @Option(names = "--configs", split = ",", description = "PxT configurations (default ${DEFAULT-VALUE})")
    List<String> configs = List.of("1x1", "1x2", "2x1");
    @Option(names = "--modes", split = ",", description = "aggregations (default ${DEFAULT-VALUE})")
    List<String> modes = List.of("trad", "ovfl");
    @Option(names = "--rounds", description = "interleaved rounds (default ${DEFAULT-VALUE})")
    int rounds = 3;
    @Option(names = "--seconds", description = "search time per run (default ${DEFAULT-VALUE})")
    double seconds = 6;
    @Option(names = "--board", description = "board size (default ${DEFAULT-VALUE})")
    int board = 11;
    @Option(names = "--output", description = "Markdown report; the PNG goes beside it")
    Path output = Path.of("benchmarks/results/mcts-figure3.md");
    @Option(names = "--extra", description = "file=label: MCTS_RESULT lines measured elsewhere, as configuration label")
    List<String> extra = new ArrayList<>();
    @Option(names = "--note", description = "a line for the report's header")
    String note = "";

    public static void main(String[] args) {
        System.exit(new CommandLine(new Figure3Benchmark()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        int cores = Runtime.getRuntime().availableProcessors();
        Map<String, List<Figure3Report.Run>> runs = new LinkedHashMap<>();
        for (int round = 1; round <= rounds; round++) {
            for (String config : configs) {
                for (String mode : modes) {
                    String key = config + " " + mode;
                    Figure3Report.Run run = runOnce(config, mode);
                    System.out.printf("round %d %s: %.1f visits/ms, %.1f (completions + visits)/ms [%d cores]%n", round,
                            key, run.visitsPerMs(), run.completionsAndVisitsPerMs(), cores);
                    runs.computeIfAbsent(key, k -> new ArrayList<>()).add(run);
                }
            }
        }
        for (String e : extra) {
            int eq = e.lastIndexOf('=');
            String label = e.substring(eq + 1);
            for (String line : Files.readAllLines(Path.of(e.substring(0, eq)))) {
                int at = line.indexOf("MCTS_RESULT ");
                if (at >= 0) {
                    Figure3Report.Run run = Figure3Report.Run.parse(line.substring(at));
                    runs.computeIfAbsent(label + " " + run.aggregation(), k -> new ArrayList<>()).add(run);
                }
            }
        }
        Figure3Report report = new Figure3Report(runs, cores, board, seconds, note);
        Files.createDirectories(output.toAbsolutePath().getParent());
        String name = output.getFileName().toString();
        Path png = output.resolveSibling(name.replaceAll("\\.md$", "") + ".png");
        Figure3Chart.write(report, png);
        Files.writeString(output, report.markdown(png.getFileName().toString()));
        System.out.println(report.markdown(png.getFileName().toString()));
        return 0;
    }

    private Figure3Report.Run runOnce(String config, String mode) {
        String[] pt = config.split("x");
        int processes = Integer.parseInt(pt[0]);
        int threads = Integer.parseInt(pt[1]);
        List<String> jvm = new ArrayList<>(LocalLauncher.inheritedJvmFlags());
        ManagementFactory.getRuntimeMXBean().getInputArguments().stream().filter(a -> a.startsWith("-D")).forEach(jvm::add);
        jvm.add("-Xmx2g");
        try (LocalLauncher job = LocalLauncher.builder(HexMcts.class).processes(processes).threadsPerProcess(threads)
                .jvmArgs(jvm.toArray(String[]::new)).args("-p", "" + processes, "-t", "" + threads, "-n", "" + board,
                        "-s", "" + seconds, "-a", mode, "--timeout", "60").forwardOutput(false).start()) {
            String line = job.process(0).awaitLine(l -> l.startsWith("MCTS_RESULT") || l.startsWith("MCTS_FAILED"),
                    Duration.ofSeconds((long) seconds + 120));
            if (!line.startsWith("MCTS_RESULT")) {
                throw new IllegalStateException(config + " " + mode + ": " + line);
            }
            job.awaitAll(Duration.ofSeconds(60));
            return Figure3Report.Run.parse(line);
        }
    }
}
