package io.fabricrpc.invocation;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.JobConfig;
import io.fabricrpc.api.MessengerConfig;
import io.fabricrpc.serialization.RemoteRegionSerializer;
import io.fabricrpc.api.SerializationRegistry;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.transport.TransportFixture;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.UnaryOperator;

/** A job of P "processes" inside this JVM: P fabrics, each with its own transport endpoint and control plane. */
public final class LocalJob implements AutoCloseable {
    public static final String SECRET = "local-job-secret-0123456789";

    public final List<Fabric> fabrics = new ArrayList<>();
    final int processes;
    final int threads;

    public static SerializationRegistry registry() {
        return SerializationRegistry.builder()
                .register(byte[].class)
                .register(long[].class)
                .register(RemoteRegion.class, RemoteRegionSerializer::new)
                .allowCapturingPackage("io.fabricrpc.invocation")
                .allowCapturingPackage("io.fabricrpc.aggregation")
                .allowCapturingPackage("io.fabricrpc.memory")
                .build();
    }

    public static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public static FabricConfig config(TransportFixture fixture, int rank, int processes, int threads, int port, String secret,
                               MessengerConfig messenger) {
        JobConfig job = JobConfig.builder().rank(rank).size(processes).threadsPerProcess(threads)
                .coordinator("127.0.0.1", port).jobSecret(secret).joinTimeout(Duration.ofSeconds(30)).build();
        return FabricConfig.of(job, registry()).withTransport(fixture.config()).withMessenger(messenger)
                .withCallTimeout(Duration.ofSeconds(30));
    }

    public LocalJob(TransportFixture fixture, int processes, int threads, MessengerConfig messenger) {
        this(fixture, processes, threads, messenger, UnaryOperator.identity());
    }

    /** As above, each rank's configuration passed through {@code adjust} (timeouts, packet size). */
    public LocalJob(TransportFixture fixture, int processes, int threads, MessengerConfig messenger,
                    UnaryOperator<FabricConfig> adjust) {
        this.processes = processes;
        this.threads = threads;
        int port = freePort();
        List<CompletableFuture<Fabric>> joining = new ArrayList<>();
        for (int rank = 0; rank < processes; rank++) {
            FabricConfig config = adjust.apply(config(fixture, rank, processes, threads, port, SECRET, messenger));
            joining.add(CompletableFuture.supplyAsync(() -> Fabric.join(config)));
        }
        for (CompletableFuture<Fabric> join : joining) {
            fabrics.add(join.orTimeout(60, TimeUnit.SECONDS).join());
        }
    }

    /** One {@link FabricTest.Inbox} per worker, as contexts for {@link #runWorkers}. */
    public static Object[][] inboxes(int processes, int threads) {
        Object[][] contexts = new Object[processes][threads];
        for (int r = 0; r < processes; r++) {
            for (int i = 0; i < threads; i++) {
                contexts[r][i] = new FabricTest.Inbox(processes * threads);
            }
        }
        return contexts;
    }

    /** Runs the calling worker's calls until {@code done} holds; fails after two minutes. */
    public static void processUntil(Fabric fabric, java.util.function.BooleanSupplier done, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!done.getAsBoolean()) {
            if (fabric.processCalls() == 0) {
                Thread.onSpinWait();
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
        }
    }

    public Fabric rank(int rank) {
        return fabrics.get(rank);
    }

    /** Runs {@code body(fabric, worker index)} on one new thread per worker of every process, each attached. */
    public void runWorkers(Object[][] contexts, BiConsumer<Fabric, Integer> body) throws InterruptedException {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> workers = new ArrayList<>();
        for (int rank = 0; rank < processes; rank++) {
            Fabric fabric = fabrics.get(rank);
            for (int index = 0; index < threads; index++) {
                Object context = contexts == null ? null : contexts[rank][index];
                int worker = index;
                workers.add(Thread.ofPlatform().name("worker-" + rank + "." + index).start(() -> {
                    try {
                        fabric.attach(worker, context);
                        body.accept(fabric, worker);
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                }));
            }
        }
        for (Thread worker : workers) {
            worker.join(300_000);
            if (worker.isAlive()) {
                failure.compareAndSet(null, new AssertionError(worker.getName() + " still running after 300 s"));
            }
        }
        if (failure.get() != null) {
            throw new AssertionError("a worker failed: " + failure.get(), failure.get());
        }
    }

    @Override
    public void close() {
        List<CompletableFuture<Void>> closing = new ArrayList<>();
        for (Fabric fabric : fabrics) {
            closing.add(CompletableFuture.runAsync(fabric::close));
        }
        for (CompletableFuture<Void> close : closing) {
            close.orTimeout(60, TimeUnit.SECONDS).join();
        }
    }
}
