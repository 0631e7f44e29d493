package io.fabricrpc.demo;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.RemoteContextConsumer;
import io.fabricrpc.api.Synchronizer;
import io.fabricrpc.api.JobConfig;
import io.fabricrpc.fabric.LocalLauncher;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.api.SerializationRegistry;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A distributed histogram: P processes × T worker threads; bin b belongs to worker b mod (P·T). Every worker draws
 * values and sends each to the bin's owner — one value per {@code call}, then batches with {@code callBuffer} —
 * and at the end, after a {@code barrier}, worker (0, 0) collects every owner's bins with {@code callReturn} and
 * checks them against a recomputation of every worker's draws while the others wait at a second barrier. Run
 * without job variables, it launches the job itself (3 × 2 by default) on this machine over the configured transport
 * (shared memory unless {@code -Dfabric.transport} says otherwise); under {@code mpirun} or {@code srun} (or with
 * {@code FABRICRPC_RANK}) it is one rank of the launcher's job.
 *
 * <p>Usage: {@code HistogramDemo [processes] [threads] [values per worker]}.
 */
public final class HistogramDemo {
    static final int BINS = 1024;
    static final int BATCH = 256;
    /** Workers reach the phase ends minutes apart in an emulated RDMA guest: as long as the consumed wait. */
    static final Duration PHASE_TIMEOUT = Duration.ofMinutes(5);

    private HistogramDemo() {
    }

    /** One worker's state: the bins it owns. */
    static final class Worker {
        final long[] bins = new long[BINS];
        long received;
    }

    static SerializationRegistry registry() {
        return SerializationRegistry.builder().register(long[].class).allowCapturingClass(HistogramDemo.class).build();
    }

    public static void main(String[] args) throws Exception {
        // Started by hand: launch the job here; started by LocalLauncher, mpirun or srun: be one rank of it.
        if (!JobConfig.launchedAsRank()) {
            System.exit(launch(args));
        }
        long valuesPerWorker = args.length > 2 ? Long.parseLong(args[2]) : 2_000_000;
        // A worker returns its bins (up to 8 KiB) through callReturn, streamed in default-sized packets.
        Fabric fabric = Fabric.join(FabricConfig.fromEnvironment(registry()));
        int threads = fabric.threadsPerProcess();
        List<Thread> workers = new ArrayList<>();
        boolean[] ok = {true};
        for (int index = 0; index < threads; index++) {
            int worker = index;
            workers.add(Thread.ofPlatform().name("worker-" + fabric.rank() + "." + index).start(() -> {
                try {
                    if (!work(fabric, worker, valuesPerWorker)) {
                        ok[0] = false;
                    }
                } catch (Throwable t) {
                    t.printStackTrace();
                    ok[0] = false;
                }
            }));
        }
        for (Thread worker : workers) {
            worker.join();
        }
        fabric.close();
        System.exit(ok[0] ? 0 : 1);
    }

    private static int owner(int bin, int workers) {
        return bin % workers;
    }

    private static ThreadId thread(int global, int threads) {
        return new ThreadId(global / threads, global % threads);
    }

    private static boolean work(Fabric fabric, int index, long values) {
        Worker state = new Worker();
        fabric.attach(index, state);
        int threads = fabric.threadsPerProcess();
        int workers = fabric.size() * threads;
        int me = fabric.rank() * threads + index;
        SplittableRandom random = new SplittableRandom(me);
        Synchronizer consumed = new Synchronizer(Synchronizer.Mode.CONSUMED);
        long[][] batches = new long[workers][BATCH];
        int[] filled = new int[workers];
        MemorySegment batchBytes = MemorySegment.ofArray(new long[BATCH]);
        long started = System.nanoTime();
        long lastReport = started;
        long sent = 0;
        for (long i = 0; i < values; i++) {
            int bin = random.nextInt(BINS);
            int owner = owner(bin, workers);
            if (i < values / 2) {
                // First half: one call per value.
                fabric.call(thread(owner, threads), (RemoteContextConsumer<Worker>) w -> {
                    w.bins[bin]++;
                    w.received++;
                }, consumed);
                sent++;
            } else {
                // Second half: batches of bins travel with the call as a buffer.
                batches[owner][filled[owner]++] = bin;
                if (filled[owner] == BATCH) {
                    sendBatch(fabric, thread(owner, threads), batches[owner], BATCH, batchBytes, consumed);
                    filled[owner] = 0;
                    sent++;
                }
            }
            if ((i & 1023) == 0) {
                fabric.processCalls();
                long now = System.nanoTime();
                if (index == 0 && now - lastReport > 1_000_000_000L) {
                    System.out.printf("rank %d worker 0: %,d values drawn, %,.0f calls/s%n", fabric.rank(), i,
                            sent / ((now - started) / 1e9));
                    lastReport = now;
                }
            }
        }
        for (int owner = 0; owner < workers; owner++) {
            if (filled[owner] > 0) {
                sendBatch(fabric, thread(owner, threads), batches[owner], filled[owner], batchBytes, consumed);
                sent++;
            }
        }
        consumed.await(PHASE_TIMEOUT); // runs this worker's incoming calls while it waits
        double seconds = (System.nanoTime() - started) / 1e9;
        System.out.printf("rank %d worker %d: %,d calls sent in %.2f s (%,.0f calls/s), all consumed%n", fabric.rank(),
                index, sent, seconds, sent / seconds);
        // Every worker's calls have run once all are past this barrier: the bins are final.
        fabric.barrier(PHASE_TIMEOUT);
        boolean verified = true;
        if (me == 0) {
            try {
                verified = verify(fabric, workers, threads, values);
            } finally {
                fabric.barrier(PHASE_TIMEOUT); // whatever happened, release the others so the job ends instead of hanging
            }
        } else {
            fabric.barrier(PHASE_TIMEOUT); // meanwhile this worker answers the verification's callReturns
        }
        return verified;
    }

    private static void sendBatch(Fabric fabric, ThreadId owner, long[] bins, int count, MemorySegment bytes,
                                  Synchronizer consumed) {
        MemorySegment.copy(MemorySegment.ofArray(bins), 0, bytes, 0, 8L * count);
        fabric.callBuffer(owner, buffer -> {
            Worker w = Fabric.currentContext();
            for (long at = 0; at < buffer.byteSize(); at += 8) {
                w.bins[(int) buffer.get(ValueLayout.JAVA_LONG_UNALIGNED, at)]++;
                w.received++;
            }
        }, bytes, 0, 8L * count, consumed);
    }

    /** Worker (0, 0): collects every owner's bins and compares them with a recomputation of all draws. */
    private static boolean verify(Fabric fabric, int workers, int threads, long values) {
        long[] expected = new long[BINS];
        for (int w = 0; w < workers; w++) {
            SplittableRandom random = new SplittableRandom(w);
            for (long i = 0; i < values; i++) {
                expected[random.nextInt(BINS)]++;
            }
        }
        long[] collected = new long[BINS];
        long total = 0;
        for (int w = 0; w < workers; w++) {
            long[] bins = fabric.callReturn(thread(w, threads), () -> ((Worker) Fabric.currentContext()).bins.clone());
            for (int b = 0; b < BINS; b++) {
                if (bins[b] != 0 && owner(b, workers) != w) {
                    System.out.println("bin " + b + " counted by worker " + w + ", which does not own it");
                    return false;
                }
                collected[b] += bins[b];
                total += bins[b];
            }
        }
        boolean match = java.util.Arrays.equals(expected, collected);
        System.out.printf("verified: %,d values in %d bins across %d workers: %s%n", total, BINS, workers,
                match && total == values * workers ? "every bin matches - OK" : "MISMATCH");
        return match && total == values * workers;
    }

    /** Starts the job on this machine and waits for it. */
    private static int launch(String[] args) {
        int processes = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        List<String> jvm = new ArrayList<>(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .filter(a -> a.startsWith("--") || a.startsWith("-D")).toList());
        jvm.add("-Xmx512m");
        System.out.printf("histogram demo: %d processes x %d threads, transport %s%n", processes, threads,
                System.getProperty("fabric.transport", "shm"));
        try (LocalLauncher job = LocalLauncher.builder(HistogramDemo.class).processes(processes).threadsPerProcess(threads)
                .jvmArgs(jvm.toArray(String[]::new)).args(args).forwardOutput(true).start()) {
            job.awaitAll(Duration.ofMinutes(10));
            System.out.println("demo finished: every process exited 0");
            return 0;
        } catch (RuntimeException e) {
            System.out.println("demo FAILED: " + e.getMessage());
            return 1;
        }
    }
}
