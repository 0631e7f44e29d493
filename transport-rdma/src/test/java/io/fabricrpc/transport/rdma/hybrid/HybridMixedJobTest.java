package io.fabricrpc.transport.rdma.hybrid;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.RemoteContextConsumer;
import io.fabricrpc.api.JobConfig;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.invocation.FabricTest.Inbox;
import io.fabricrpc.invocation.LocalJob;
import io.fabricrpc.api.SerializationRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * A fabric of three processes (in this JVM) on two hosts: ranks 0 and 1 share a host id (shared memory between
 * them), rank 2 has its own (RDMA to both). Every worker calls every worker; calls are exactly once and in order.
 */
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class HybridMixedJobTest {
    private static final int PROCESSES = 3;
    private static final long CALLS_PER_PAIR = 300;

    @Test
    void callsCrossBothPathsExactlyOnceAndInOrder() throws Exception {
        SerializationRegistry registry = SerializationRegistry.builder()
                .allowCapturingClass(HybridMixedJobTest.class).build();
        int port = LocalJob.freePort();
        List<CompletableFuture<Fabric>> joining = new ArrayList<>();
        for (int rank = 0; rank < PROCESSES; rank++) {
            JobConfig job = JobConfig.builder().rank(rank).size(PROCESSES).threadsPerProcess(1)
                    .coordinator("127.0.0.1", port).jobSecret(LocalJob.SECRET).joinTimeout(Duration.ofSeconds(60))
                    .build();
            FabricConfig config = FabricConfig.of(job, registry)
                    .withTransport(HybridFixture.config(rank < 2 ? "job-host-1" : "job-host-2"))
                    .withCallTimeout(Duration.ofSeconds(30));
            joining.add(CompletableFuture.supplyAsync(() -> Fabric.join(config)));
        }
        List<Fabric> fabrics = new ArrayList<>();
        try {
            for (CompletableFuture<Fabric> join : joining) {
                fabrics.add(join.orTimeout(90, TimeUnit.SECONDS).join());
            }
            Inbox[] inboxes = new Inbox[PROCESSES];
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> workers = new ArrayList<>();
            for (int rank = 0; rank < PROCESSES; rank++) {
                Fabric fabric = fabrics.get(rank);
                Inbox inbox = inboxes[rank] = new Inbox(PROCESSES);
                int me = rank;
                workers.add(Thread.ofPlatform().name("mixed-worker-" + rank).start(() -> {
                    try {
                        fabric.attach(0, inbox);
                        for (long sequence = 0; sequence < CALLS_PER_PAIR; sequence++) {
                            for (int dest = 0; dest < PROCESSES; dest++) {
                                long s = sequence;
                                fabric.call(new ThreadId(dest, 0),
                                        (RemoteContextConsumer<Inbox>) box -> box.record(me, s), null);
                            }
                            if ((sequence & 15) == 0) {
                                fabric.processCalls();
                            }
                        }
                        LocalJob.processUntil(fabric, () -> inbox.received == CALLS_PER_PAIR * PROCESSES,
                                "all calls to rank " + me);
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                }));
            }
            for (Thread worker : workers) {
                worker.join(180_000);
                if (worker.isAlive()) {
                    failure.compareAndSet(null, new AssertionError(worker.getName() + " still running after 180 s"));
                }
            }
            assertNull(failure.get(), () -> "a worker failed: " + failure.get());
            for (int rank = 0; rank < PROCESSES; rank++) {
                assertNull(inboxes[rank].error, "rank " + rank);
                assertEquals(CALLS_PER_PAIR * PROCESSES, inboxes[rank].received, "calls received by rank " + rank);
            }
        } finally {
            List<CompletableFuture<Void>> closing = new ArrayList<>();
            for (Fabric fabric : fabrics) {
                closing.add(CompletableFuture.runAsync(fabric::close));
            }
            for (CompletableFuture<Void> close : closing) {
                close.orTimeout(60, TimeUnit.SECONDS).join();
            }
        }
    }
}
