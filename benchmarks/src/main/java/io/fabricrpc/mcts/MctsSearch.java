package io.fabricrpc.mcts;

import io.fabricrpc.aggregation.Aggregation;
import io.fabricrpc.aggregation.AggregationConfig;
import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.RemoteRunnable;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.api.SerializationRegistry;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * A distributed tree-parallel MCTS of one position (Seriema §5.3.2), run by every process of a fabric job with the
 * same game, settings and position. The root lives on worker 0 of rank 0; rank 0's threads start the rollouts in
 * phases and select from the root directly; below it every step is a call to the node's owner. Rank 0's worker 0
 * coordinates: at a phase boundary every started rollout has completed, so it reads the counters there, and at the
 * end it broadcasts the stop; then every worker shuts its aggregators down (flush + one-way signal) and waits for
 * every worker's signal. A worker that fails stops its process's search and {@link #run()} throws; peers notice
 * the process end through idle probes (or fail at their own deadline).
 */
public final class MctsSearch {
    private static final long PROBE_NANOS = 100_000_000L;

    final Fabric fabric;
    final Fabric calls;
    final Game game;
    final MctsSettings settings;
    final int threads;
    final int workers;
    final ThreadId[] ids;
    final MctsWorker[] local;
    private final byte[] start;
    private final boolean rootProcess;
    private final Consumer<String> progress;
    private final long inFlightCap;
    private final long phaseSize;
    private Node root;
    private final AtomicLong started = new AtomicLong();
    private final AtomicLong completed = new AtomicLong();
    private volatile long phaseEnd;
    volatile boolean stop;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    // The coordinator's (rank 0, worker 0) own state.
    private long startNanos;
    private long lastCompleted;
    private long lastProgressNanos;
    private long lastPrintNanos;
    private int phases;
    private long[] warmCounters;
    private long warmCompleted;
    private long warmNanos;
    private volatile SearchResult result;

    /**
     * @param fabric   the joined fabric ({@link Fabric#join}); its registry must include {@link #registry()}
     * @param progress receives a progress line on rank 0 about once a second (null: none)
     */
    public MctsSearch(Fabric fabric, Game game, MctsSettings settings, byte[] start, Consumer<String> progress) {
        if (start.length != game.stateBytes()) {
            throw new IllegalArgumentException("a state of " + game.stateBytes() + " bytes expected, got " + start.length);
        }
        if (game.winner(start) != Game.NONE) {
            throw new IllegalArgumentException("the game is already over in the given position");
        }
        this.fabric = fabric;
        this.game = game;
        this.settings = settings;
        this.start = start.clone();
        this.progress = progress;
        this.threads = fabric.threadsPerProcess();
        this.workers = fabric.size() * threads;
        this.rootProcess = fabric.rank() == 0;
        this.inFlightCap = (long) settings.inFlightPerThread() * workers;
        this.phaseSize = (long) settings.phaseRolloutsPerThread() * workers;
        // The one line that picks the aggregation.
        this.calls = switch (settings.mode()) {
            case TRAD -> Aggregation.traditional(fabric, AggregationConfig.traditional());
            case OVFL -> Aggregation.overflow(fabric, AggregationConfig.overflow());
            case DIRECT -> fabric;
        };
        this.ids = new ThreadId[workers];
        for (int g = 0; g < workers; g++) {
            ids[g] = new ThreadId(g / threads, g % threads);
        }
        this.local = new MctsWorker[threads];
        for (int i = 0; i < threads; i++) {
            local[i] = new MctsWorker(this, i);
        }
    }

    /** What every process's registry must allow: the framework's lambdas and the counters they return. */
    public static SerializationRegistry.Builder registry() {
        return SerializationRegistry.builder().register(long[].class).allowCapturingClass(MctsWorker.class)
                .allowCapturingClass(MctsSearch.class);
    }

    /**
     * Runs the search on this process's worker threads (it attaches them) and returns the result on rank 0, null on
     * the other ranks.
     *
     * @throws io.fabricrpc.api.PeerFailedException if a process of the job died during the search
     */
    public SearchResult run() throws InterruptedException {
        startNanos = System.nanoTime();
        lastProgressNanos = startNanos;
        lastPrintNanos = startNanos;
        if (rootProcess) {
            root = local[0].register(start.clone(), -1, -1, true);
            phaseEnd = Math.min(phaseSize, settings.rollouts());
        }
        List<Thread> running = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
            MctsWorker worker = local[i];
            running.add(Thread.ofPlatform().name("mcts-" + fabric.rank() + "." + i).start(() -> work(worker)));
        }
        long joinBy = deadline() + Duration.ofSeconds(30).toNanos();
        for (Thread t : running) {
            t.join(Math.max(1, (joinBy - System.nanoTime()) / 1_000_000));
            if (t.isAlive()) {
                fail(new IllegalStateException(t.getName() + " still running " + settings.timeLimit().plus(settings.timeout())
                        .plusSeconds(30).toMillis() + " ms after the start"));
            }
        }
        Throwable t = failure.get();
        if (t instanceof RuntimeException e) {
            throw e;
        }
        if (t instanceof Error e) {
            throw e;
        }
        if (t != null) {
            throw new IllegalStateException(t);
        }
        return result;
    }

    private long deadline() {
        return startNanos + settings.timeLimit().toNanos() + settings.timeout().toNanos();
    }

    private void fail(Throwable t) {
        failure.compareAndSet(null, t);
        stop = true;
    }

    private void work(MctsWorker w) {
        try {
            fabric.attach(w.index, w);
            long deadline = deadline();
            long nextProbe = System.nanoTime() + PROBE_NANOS;
            int idle = 0;
            while (!stop) {
                int did = fabric.processCalls();
                Node leaf = w.simulations.poll();
                if (leaf != null) {
                    w.simulate(leaf);
                    did++;
                }
                if (rootProcess) {
                    did += startRollouts(w);
                    if (w.index == 0) {
                        coordinate(w);
                    }
                }
                if (did > 0) {
                    idle = 0;
                } else {
                    // Idle: send what the aggregators hold rather than wait for their flusher.
                    if (calls != fabric && Aggregation.bufferedBytes(calls) > 0) {
                        calls.flush();
                    }
                    long now = System.nanoTime();
                    if (now > nextProbe) {
                        probePeers();
                        nextProbe = now + PROBE_NANOS;
                        if (now > deadline) {
                            throw new IllegalStateException("worker " + w.global + ": no stop within "
                                    + (settings.timeLimit().toMillis() + settings.timeout().toMillis()) + " ms");
                        }
                    }
                    // Back off when idle for long: on an oversubscribed machine a spinning worker starves its
                    // process's peer workers and the fabric's own threads (heartbeat, flusher).
                    if (++idle > 4096) {
                        LockSupport.parkNanos(20_000);
                    } else if (idle > 256) {
                        Thread.yield();
                    } else {
                        Thread.onSpinWait();
                    }
                }
            }
            if (failure.get() == null && calls != fabric) {
                // A route to every worker, so that each one receives exactly one signal from each worker.
                for (ThreadId id : ids) {
                    calls.call(id, (RemoteRunnable) () -> { }, null);
                }
                Aggregation.shutdown(calls);
                Aggregation.awaitShutdownSignals(fabric, workers, settings.timeout());
            }
        } catch (Throwable t) {
            fail(t);
        }
    }

    /** One no-op call to each other process: it throws PeerFailedException once that process is gone. */
    private void probePeers() {
        for (int r = 0; r < fabric.size(); r++) {
            if (r != fabric.rank()) {
                fabric.call(ids[r * threads], (RemoteRunnable) () -> { }, null);
            }
        }
    }

    /** Starts a few rollouts of the current phase from the root, keeping at most the cap in flight (plus T - 1). */
    private int startRollouts(MctsWorker w) {
        int n = 0;
        while (n < 4) {
            long s = started.get();
            if (s >= phaseEnd || s - completed.get() >= inFlightCap) {
                break;
            }
            if (started.compareAndSet(s, s + 1)) {
                w.select(root);
                n++;
            }
        }
        return n;
    }

    void rolloutCompleted() {
        completed.incrementAndGet();
    }

    private void coordinate(MctsWorker w) {
        long now = System.nanoTime();
        long c = completed.get();
        if (c != lastCompleted) {
            lastCompleted = c;
            lastProgressNanos = now;
        } else if (now - lastProgressNanos > settings.timeout().toNanos()) {
            throw new IllegalStateException("no rollout completed within " + settings.timeout().toMillis()
                    + " ms: started " + started.get() + ", completed " + c + ", phase ends at " + phaseEnd);
        }
        if (c < phaseEnd) {
            return;
        }
        phases++; // every rollout of the phase has completed: the tree is quiet
        if (phases == 1) {
            warmCounters = gather(w);
            warmCompleted = c;
            warmNanos = now;
        }
        boolean done = c >= settings.rollouts() || now - startNanos >= settings.timeLimit().toNanos();
        if (progress != null && (done || now - lastPrintNanos > 1_000_000_000L)) {
            lastPrintNanos = now;
            SearchResult.MoveStat best = moveStats().getFirst();
            double s = (now - startNanos) / 1e9;
            progress.accept(String.format("searching: phase %d, %,d rollouts in %.1f s (%,.0f rollouts/s), best so far "
                    + "%s (%.1f%%, %,d visits)", phases, c, s, c / s, best.name(), 100 * best.winRate(), best.visits()));
        }
        if (!done) {
            phaseEnd = Math.min(settings.rollouts(), phaseEnd + phaseSize);
            return;
        }
        long[] totals = gather(w);
        double seconds = (now - startNanos) / 1e9;
        long steadyCompletions = c - warmCompleted;
        long steadyVisits = totals[0] - warmCounters[0];
        double steadySeconds = (now - warmNanos) / 1e9;
        result = new SearchResult(started.get(), c, root.totalVisits(), totals[0], totals[1], totals[2], totals[4],
                seconds, phases, steadyCompletions, steadyVisits, steadySeconds, moveStats());
        fabric.broadcast(() -> ((MctsWorker) Fabric.currentContext()).search.stop = true, null);
    }

    /** Sums every worker's counters (visits, simulations, deferrals, expansions, nodes). */
    private long[] gather(MctsWorker me) {
        long[] sum = new long[5];
        for (int g = 0; g < workers; g++) {
            long[] c = g == me.global ? me.counters()
                    : fabric.callReturn(ids[g], () -> ((MctsWorker) Fabric.currentContext()).counters());
            for (int i = 0; i < sum.length; i++) {
                sum[i] += c[i];
            }
        }
        return sum;
    }

    private List<SearchResult.MoveStat> moveStats() {
        List<SearchResult.MoveStat> stats = new ArrayList<>();
        double scale = 2.0 * settings.playouts();
        for (int s = 0; s < root.slotCount(); s++) {
            long v = root.visits(s);
            stats.add(new SearchResult.MoveStat(root.move(s), game.moveName(root.move(s)), v,
                    v == 0 ? 0 : root.wins(s) / (scale * v)));
        }
        stats.sort(Comparator.comparingLong(SearchResult.MoveStat::visits).reversed()
                .thenComparing(Comparator.comparingDouble(SearchResult.MoveStat::winRate).reversed()));
        return stats;
    }

    /**
     * The whole tree as text, one line per expanded child in expansion order ({@code depth move visits wins}), for
     * a one-process job after {@link #run()} (the nodes of other processes are not reachable from here).
     */
    public String dumpTree() {
        if (fabric.size() != 1 || root == null) {
            throw new IllegalStateException("dumpTree needs a finished one-process search");
        }
        StringBuilder sb = new StringBuilder();
        dump(root, 0, sb);
        return sb.toString();
    }

    private void dump(Node node, int depth, StringBuilder sb) {
        for (int s = 0; s < node.slotCount(); s++) {
            sb.append(depth).append(' ').append(game.moveName(node.move(s))).append(' ').append(node.visits(s))
                    .append(' ').append(node.wins(s)).append('\n');
            long child = node.child(s);
            if (child >= 0) {
                dump(local[(int) (child >>> 32)].node((int) child), depth + 1, sb);
            }
        }
    }
}
