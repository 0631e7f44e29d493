package io.fabricrpc.transport.rdma.firehose;

import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.transport.Transports;
import io.fabricrpc.transport.rdma.RdmaTestSupport;
import io.fabricrpc.transport.rdma.spi.RdmaTransport;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Firehose Figure 3 in this setting: bandwidth of puts from random, bucket-aligned places of an unregistered working
 * set of user memory to a registered region of a peer endpoint, against the working-set size, with the firehose
 * cache (pin, write, release) and without (register, write, deregister per put). Rounds interleave the two; the
 * report gives each side's median bandwidth and the median of the per-round ratios (cache / no cache).
 *
 * <pre>
 * FirehoseBenchmark [--put BYTES] [--puts N] [--rounds R] [--sets KiB,KiB,...] [--max-pinned KiB] [--max-victim KiB]
 * </pre>
 * Prints a markdown report on standard output. Needs an RDMA device (run it through scripts/firehose-bench.sh).
 */
public final class FirehoseBenchmark {
    private FirehoseBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int put = 64 * 1024;
        int puts = 200;
        int rounds = 5;
        long maxPinned = 256 * 1024; // a put holds one bucket at a time: what stays cached are victims
        long maxVictim = 1024 * 1024;
        long[] sets = {256 * 1024, 512 * 1024, 1024 * 1024, 2048 * 1024, 4096 * 1024, 8192 * 1024};
        for (int i = 0; i < args.length; i++) {
            String value = i + 1 < args.length ? args[i + 1] : null;
            switch (args[i]) {
                case "--put" -> put = Integer.parseInt(value);
                case "--puts" -> puts = Integer.parseInt(value);
                case "--rounds" -> rounds = Integer.parseInt(value);
                case "--max-pinned" -> maxPinned = Long.parseLong(value) * 1024;
                case "--max-victim" -> maxVictim = Long.parseLong(value) * 1024;
                case "--sets" -> sets = Arrays.stream(value.split(",")).mapToLong(s -> Long.parseLong(s.trim()) * 1024)
                        .toArray();
                default -> throw new IllegalArgumentException("unknown option " + args[i]
                        + " (--put, --puts, --rounds, --sets, --max-pinned, --max-victim)");
            }
            i++;
        }
        int bucket = FirehoseCache.Config.DEFAULT_BUCKET_SIZE;
        if (put % bucket != 0 && bucket % put != 0) {
            throw new IllegalArgumentException("--put must divide or be a multiple of the bucket size " + bucket);
        }
        Map<String, String> config = Map.of("fabric.transport", "rdma", "rdma.bindAddress",
                RdmaTestSupport.rdmaAddress().getHostAddress());
        StringBuilder out = new StringBuilder();
        out.append("# Firehose registration cache: put bandwidth against working-set size\n\n");
        out.append("Puts of ").append(put / 1024).append(" KiB from random ").append(put / 1024)
                .append(" KiB-aligned places of an unregistered working set to a registered region of a second ")
                .append("endpoint (RC QP, one write at a time, awaited). *cache*: `FirehoseCache.pin` / write / ")
                .append("`release` (bucket ").append(bucket / 1024).append(" KiB, M = ").append(maxPinned / 1024)
                .append(" KiB, MAXVICTIM = ").append(maxVictim / 1024).append(" KiB, so the bound M + MAXVICTIM is ")
                .append((maxPinned + maxVictim) / 1024).append(" KiB). *no cache*: `registerExternal` / write / ")
                .append("deregister per put. ").append(rounds).append(" interleaved rounds of ").append(puts)
                .append(" puts per side and working set (after one warm-up round); medians.\n\n");
        out.append("Machine: ").append(System.getProperty("os.name")).append(' ').append(System.getProperty("os.version"))
                .append(", ").append(Runtime.getRuntime().availableProcessors()).append(" CPUs, Java ")
                .append(Runtime.version()).append(", JVM flags: ")
                .append(String.join(" ", java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()))
                .append("\n\n");
        out.append("| working set (KiB) | cache MB/s | no cache MB/s | median ratio cache/no cache | cache hit rate |\n");
        out.append("|---:|---:|---:|---:|---:|\n");
        try (Arena arena = Arena.ofShared();
             RdmaTransport a = (RdmaTransport) Transports.open(config);
             RdmaTransport b = (RdmaTransport) Transports.open(config);
             LocalRegion target = b.allocate(put, RemoteAccess.WRITE)) {
            Link link = a.connect(b.address());
            long largest = Arrays.stream(sets).max().orElseThrow();
            MemorySegment memory = arena.allocate(largest, bucket);
            memory.fill((byte) 1);
            for (long set : sets) {
                FirehoseCache.Config cacheConfig = new FirehoseCache.Config(bucket, maxPinned, maxVictim,
                        TimeUnit.SECONDS.toNanos(10));
                try (FirehoseCache<LocalRegion> cache = RdmaFirehose.localCache(a, cacheConfig)) {
                    MemorySegment ws = memory.asSlice(0, set);
                    SplittableRandom random = new SplittableRandom(set);
                    List<Double> withCache = new ArrayList<>();
                    List<Double> without = new ArrayList<>();
                    List<Double> ratios = new ArrayList<>();
                    long hitsBefore = 0;
                    long missesBefore = 0;
                    for (int round = -1; round < rounds; round++) {
                        if (round == 0) {
                            hitsBefore = cache.hits();
                            missesBefore = cache.misses();
                        }
                        // Alternate which side goes first so drift does not favour one.
                        double c;
                        double n;
                        if ((round & 1) == 0) {
                            c = cached(cache, link, target, ws, put, puts, random);
                            n = uncached(a, link, target, ws, put, puts, random);
                        } else {
                            n = uncached(a, link, target, ws, put, puts, random);
                            c = cached(cache, link, target, ws, put, puts, random);
                        }
                        if (round >= 0) {
                            withCache.add(c);
                            without.add(n);
                            ratios.add(c / n);
                        }
                    }
                    long hits = cache.hits() - hitsBefore;
                    long misses = cache.misses() - missesBefore;
                    out.append(String.format("| %d | %.1f | %.1f | %.2f | %.0f%% |%n", set / 1024, median(withCache),
                            median(without), median(ratios), 100.0 * hits / Math.max(1, hits + misses)));
                    System.err.println("firehose-bench: working set " + set / 1024 + " KiB done: " + cache);
                }
            }
        }
        System.out.print(out);
    }

    private static long randomOffset(SplittableRandom random, MemorySegment ws, int put) {
        return (long) random.nextInt((int) (ws.byteSize() / put)) * put;
    }

    /** MB/s of {@code puts} puts through the cache. */
    private static double cached(FirehoseCache<LocalRegion> cache, Link link, LocalRegion target, MemorySegment ws,
                                 int put, int puts, SplittableRandom random) {
        long start = System.nanoTime();
        for (int i = 0; i < puts; i++) {
            FirehoseHandle<LocalRegion> h = cache.pin(ws.asSlice(randomOffset(random, ws, put), put));
            try {
                link.awaitCompletion(RdmaFirehose.write(link, h, 0, target.remote(), 0, put));
            } finally {
                cache.release(h);
            }
        }
        return (double) puts * put / ((System.nanoTime() - start) / 1e9) / 1e6;
    }

    /** MB/s of {@code puts} puts that register and deregister their source each time. */
    private static double uncached(RdmaTransport transport, Link link, LocalRegion target, MemorySegment ws, int put,
                                   int puts, SplittableRandom random) {
        long start = System.nanoTime();
        for (int i = 0; i < puts; i++) {
            try (LocalRegion source = transport.registerExternal(ws.asSlice(randomOffset(random, ws, put), put),
                    RemoteAccess.NONE)) {
                link.awaitCompletion(link.write(source, 0, target.remote(), 0, put));
            }
        }
        return (double) puts * put / ((System.nanoTime() - start) / 1e9) / 1e6;
    }

    private static double median(List<Double> values) {
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
