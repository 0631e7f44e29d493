package io.fabricrpc.benchmarks;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.JobConfig;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.api.SerializationRegistry;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Sequential {@code callReturn} (A) against pipelined {@code callReturnAsync} with a window of calls in flight (B):
 * two processes' fabrics in this JVM over the configured transport (shared memory by default), rank 0's worker 0
 * calling rank 1's handler thread. A and B alternate, A B A B, and the report is the median over pairs of the
 * per-pair ratio of B's calls/s to A's, so that drift of the machine's load cancels out.
 *
 * <p>Usage: {@code CallReturnAsyncBenchmark [pairs] [calls per run] [window]} (defaults 7, 100000, 64).
 */
public final class CallReturnAsyncBenchmark {
    private CallReturnAsyncBenchmark() {
    }

    public static void main(String[] args) throws Exception {
        int pairs = args.length > 0 ? Integer.parseInt(args[0]) : 7;
        int calls = args.length > 1 ? Integer.parseInt(args[1]) : 100_000;
        int window = args.length > 2 ? Integer.parseInt(args[2]) : 64;
        SerializationRegistry registry = SerializationRegistry.builder()
                .allowCapturingClass(CallReturnAsyncBenchmark.class).build();
        int port = freePort();
        String secret = HexFormat.of().formatHex(SecureRandom.getSeed(16));
        List<CompletableFuture<Fabric>> joining = new ArrayList<>();
        for (int rank = 0; rank < 2; rank++) {
            JobConfig job = JobConfig.builder().rank(rank).size(2).threadsPerProcess(1).coordinator("127.0.0.1", port)
                    .jobSecret(secret).joinTimeout(Duration.ofSeconds(30)).build();
            FabricConfig config = FabricConfig.of(job, registry);
            joining.add(CompletableFuture.supplyAsync(() -> Fabric.join(config)));
        }
        Fabric caller = joining.get(0).get(60, TimeUnit.SECONDS);
        Fabric callee = joining.get(1).get(60, TimeUnit.SECONDS);
        try {
            callee.startHandlerThreads();
            caller.attach(0);
            ThreadId dest = new ThreadId(1, 0);
            sequential(caller, dest, calls / 10); // warm-up of both paths
            pipelined(caller, dest, calls / 10, window);
            double[] a = new double[pairs];
            double[] b = new double[pairs];
            double[] ratios = new double[pairs];
            for (int pair = 0; pair < pairs; pair++) {
                a[pair] = sequential(caller, dest, calls);
                b[pair] = pipelined(caller, dest, calls, window);
                ratios[pair] = b[pair] / a[pair];
                System.out.printf("pair %d: sequential %,.0f calls/s, %d in flight %,.0f calls/s, ratio %.2f%n", pair,
                        a[pair], window, b[pair], ratios[pair]);
            }
            System.out.printf("median: sequential %,.0f calls/s, pipelined %,.0f calls/s, median ratio %.2f%n",
                    median(a), median(b), median(ratios));
        } finally {
            CompletableFuture<Void> closing = CompletableFuture.runAsync(callee::close);
            caller.close();
            closing.get(60, TimeUnit.SECONDS);
        }
        System.exit(0);
    }

    /** Calls per second of {@code calls} blocking calls, one after the other. */
    private static double sequential(Fabric fabric, ThreadId dest, int calls) {
        long sum = 0;
        long started = System.nanoTime();
        for (int i = 0; i < calls; i++) {
            long v = i;
            sum += fabric.callReturn(dest, () -> v + 1);
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        check(sum, calls);
        return calls / seconds;
    }

    /** Calls per second with {@code window} asynchronous calls in flight, the oldest awaited before each new one. */
    @SuppressWarnings("unchecked")
    private static double pipelined(Fabric fabric, ThreadId dest, int calls, int window) throws Exception {
        CompletableFuture<Long>[] inFlight = new CompletableFuture[window];
        long sum = 0;
        long started = System.nanoTime();
        for (int i = 0; i < calls; i++) {
            int at = i % window;
            if (inFlight[at] != null) {
                sum += inFlight[at].get(60, TimeUnit.SECONDS);
            }
            long v = i;
            inFlight[at] = fabric.callReturnAsync(dest, () -> v + 1);
        }
        for (CompletableFuture<Long> future : inFlight) {
            if (future != null) {
                sum += future.get(60, TimeUnit.SECONDS);
            }
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        check(sum, calls);
        return calls / seconds;
    }

    private static void check(long sum, int calls) {
        long expected = (long) calls * (calls + 1) / 2;
        if (sum != expected) {
            throw new IllegalStateException("results sum to " + sum + ", expected " + expected);
        }
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
