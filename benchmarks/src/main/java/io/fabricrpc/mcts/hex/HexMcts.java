package io.fabricrpc.mcts.hex;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.JobConfig;
import io.fabricrpc.fabric.LocalLauncher;
import io.fabricrpc.mcts.MctsSearch;
import io.fabricrpc.mcts.MctsSettings;
import io.fabricrpc.mcts.SearchResult;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * Plays one move of Hex with the distributed MCTS: run outside a job, it launches P processes × T threads on this
 * machine ({@link LocalLauncher}); inside one (the {@code FABRICRPC_*} variables, Slurm or Open MPI) it is one rank.
 * Rank 0 prints a progress line while it searches, then rollouts/s, visits/s, the chosen move with its win rate and
 * the top 5, and a machine-readable {@code MCTS_RESULT} line; a failed rank prints {@code MCTS_FAILED} and exits 3.
 */
@Command(name = "mcts.sh", mixinStandardHelpOptions = true,
        description = "Plays one move of Hex with the distributed tree-parallel MCTS (transport: -Dfabric.transport).")
public final class HexMcts implements Callable<Integer> {
    @Option(names = {"-p", "--processes"}, description = "processes (default ${DEFAULT-VALUE})")
    int processes = 1;
    @Option(names = {"-t", "--threads"}, description = "worker threads per process (default ${DEFAULT-VALUE})")
    int threads = 2;
    @Option(names = {"-n", "--board"}, description = "board size n (n x n; default ${DEFAULT-VALUE})")
    int board = 11;
    @Option(names = "--moves", description = "moves played so far from the empty board, Black first, e.g. \"f6 e7\"")
    String moves = "";
    @Option(names = {"-s", "--seconds"}, description = "search time limit, checked at phase ends (default ${DEFAULT-VALUE})")
    double seconds = 10;
    @Option(names = {"-r", "--rollouts"}, description = "rollout budget (default ${DEFAULT-VALUE})")
    long rollouts = 10_000_000;
    @Option(names = {"-a", "--aggregation"}, description = "trad, ovfl or direct (default ${DEFAULT-VALUE})")
    String aggregation = "trad";
    @Option(names = "--playouts", description = "random playouts per simulation (default ${DEFAULT-VALUE})")
    int playouts = 16;
    @Option(names = "--exploration", description = "UCB constant C (default ${DEFAULT-VALUE})")
    double exploration = 1.0;
    @Option(names = "--in-flight", description = "rollouts in flight per worker thread (default ${DEFAULT-VALUE})")
    int inFlight = 128;
    @Option(names = "--phase", description = "rollouts per phase per worker thread (default ${DEFAULT-VALUE})")
    int phase = 4096;
    @Option(names = "--seed", description = "random seed (default ${DEFAULT-VALUE})")
    long seed = 1;
    @Option(names = "--edges", description = "BLACK_NORTH_SOUTH (default) or BLACK_WEST_EAST")
    Hex.Edges edges = Hex.Edges.BLACK_NORTH_SOUTH;
    @Option(names = "--timeout", description = "bound in seconds on every wait beyond the time limit (default ${DEFAULT-VALUE})")
    long timeout = 60;

    public static void main(String[] args) {
        System.exit(new CommandLine(new HexMcts()).setCaseInsensitiveEnumValuesAllowed(true).execute(args));
    }

    static boolean inJob() {
        return System.getenv(JobConfig.ENV_RANK) != null || System.getenv("SLURM_PROCID") != null
                || System.getenv("OMPI_COMM_WORLD_RANK") != null;
    }

    @Override
    public Integer call() throws Exception {
        Hex hex = new Hex(board, edges);
        byte[] start = hex.initialState();
        for (String move : moves.trim().isEmpty() ? new String[0] : moves.trim().split("[\\s,]+")) {
            hex.play(start, hex.parseMove(move));
        }
        MctsSettings settings = MctsSettings.defaults().withPlayouts(playouts).withExploration(exploration)
                .withInFlightPerThread(inFlight).withPhaseRolloutsPerThread(phase).withRollouts(rollouts)
                .withTimeLimit(Duration.ofMillis((long) (seconds * 1000))).withSeed(seed)
                .withMode(MctsSettings.Mode.valueOf(aggregation.toUpperCase(Locale.ROOT)))
                .withTimeout(Duration.ofSeconds(timeout));
        if (!inJob()) {
            return launch();
        }
        Fabric fabric = Fabric.join(FabricConfig.fromEnvironment(MctsSearch.registry().build()));
        if (fabric.rank() == 0) {
            System.out.printf("Hex %dx%d, %d process(es) x %d thread(s), transport %s, aggregation %s, %d playouts per "
                            + "simulation, C = %.2f%n%s%n", board, board, fabric.size(), fabric.threadsPerProcess(),
                    System.getProperty("fabric.transport", "shm"), aggregation, playouts, exploration, hex.render(start));
        }
        try {
            SearchResult result = new MctsSearch(fabric, hex, settings, start, System.out::println).run();
            if (result != null) {
                print(result, hex, start, fabric.size(), fabric.threadsPerProcess());
            }
        } catch (Throwable t) {
            System.out.println("MCTS_FAILED " + t);
            System.out.flush();
            Runtime.getRuntime().halt(3); // the job is broken: no orderly close with a dead peer
        }
        fabric.close();
        return 0;
    }

    private int launch() {
        List<String> jvm = new ArrayList<>(LocalLauncher.inheritedJvmFlags());
        ManagementFactory.getRuntimeMXBean().getInputArguments().stream().filter(a -> a.startsWith("-D")).forEach(jvm::add);
        jvm.add("-Xmx2g");
        try (LocalLauncher job = LocalLauncher.builder(HexMcts.class).processes(processes).threadsPerProcess(threads)
                .jvmArgs(jvm.toArray(String[]::new)).args(rawArgs()).forwardOutput(true).start()) {
            job.awaitAll(Duration.ofSeconds((long) seconds + 2 * timeout + 60));
            return 0;
        } catch (LocalLauncher.LaunchException e) {
            System.out.println("mcts FAILED: " + e.getMessage());
            return 1;
        }
    }

    private String[] rawArgs() {
        return new String[] {"-p", "" + processes, "-t", "" + threads, "-n", "" + board, "--moves", moves,
                "-s", "" + seconds, "-r", "" + rollouts, "-a", aggregation, "--playouts", "" + playouts,
                "--exploration", "" + exploration, "--in-flight", "" + inFlight, "--phase", "" + phase,
                "--seed", "" + seed, "--edges", edges.name(), "--timeout", "" + timeout};
    }

    private void print(SearchResult r, Hex hex, byte[] start, int processes, int threads) {
        String side = hex.sideToMove(start) == 0 ? "Black" : "White";
        double steadyRollouts = r.steadyCompletions() / Math.max(1e-9, r.steadySeconds());
        double steadyVisits = r.steadyVisits() / Math.max(1e-9, r.steadySeconds());
        System.out.printf("result: %,d rollouts in %.2f s: %,.0f rollouts/s, %,.0f visits/s (after the first phase: "
                        + "%,.0f rollouts/s, %,.0f visits/s); %,d nodes, %,d deferred selections%n", r.rolloutsCompleted(),
                r.seconds(), r.rolloutsCompleted() / r.seconds(), r.visits() / r.seconds(), steadyRollouts, steadyVisits,
                r.nodes(), r.deferrals());
        SearchResult.MoveStat best = r.best();
        System.out.printf("chosen move: %s, win rate %.1f%% for %s (%,d visits)%n", best.name(), 100 * best.winRate(),
                side, best.visits());
        StringBuilder top = new StringBuilder("top 5:");
        for (SearchResult.MoveStat m : r.moves().subList(0, Math.min(5, r.moves().size()))) {
            top.append(String.format("  %s %.1f%% (%,d)", m.name(), 100 * m.winRate(), m.visits()));
        }
        System.out.println(top);
        System.out.printf(Locale.ROOT, "MCTS_RESULT processes=%d threads=%d aggregation=%s started=%d completed=%d "
                        + "rootVisits=%d visits=%d simulations=%d seconds=%.3f steadyCompletions=%d steadyVisits=%d "
                        + "steadySeconds=%.3f move=%s winrate=%.4f%n", processes, threads, aggregation,
                r.rolloutsStarted(), r.rolloutsCompleted(), r.rootVisits(), r.visits(), r.simulations(), r.seconds(),
                r.steadyCompletions(), r.steadyVisits(), r.steadySeconds(), best.name(), best.winRate());
    }
}
