package io.fabricrpc.invocation;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.Synchronizer;
import io.fabricrpc.fabric.ControlPlane;
import io.fabricrpc.fabric.ControlPlaneListener;
import io.fabricrpc.api.JobConfig;
import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.api.MessengerConfig;

import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * One rank of {@link FaultInjectionCrossProcessTest}: the test stops, kills or truncates from outside; each rank
 * prints {@code KEY k=v ...} lines (times {@code at=} in epoch µs) and then waits to be killed by the test.
 * Scenarios: {@code stall} (rank 2 streams calls to rank 1 and holds a callReturn on rank 0 while the test stops and
 * resumes it), {@code coordinator} (ranks 1 and 2 hold callReturns on each other when rank 0 dies), {@code broadcast}
 * (a CONSUMED broadcast waits in the tree behind a busy interior worker 1/1 when rank 1 dies), {@code midstream}
 * (rank 1 streams checked payloads to rank 0 one-way and by streamed callReturn), {@code truncate} (rank 1 calls rank
 * 0 while its files are truncated), {@code fill} (rank 1 fills shm.dir, then calls a worker it never called).
 */
public final class FaultScenarioMain {
    private FaultScenarioMain() {
    }

    static long now() {
        Instant t = Instant.now();
        return t.getEpochSecond() * 1_000_000 + t.getNano() / 1000;
    }

    static void print(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /** Class name and message on one line, for the test to match. */
    static String describe(Throwable e) {
        return e == null ? "none" : (e.getClass().getSimpleName() + ":" + e.getMessage()).replace('\n', ' ');
    }

    static String outcome(Supplier<Object> action) {
        try {
            return "returned:" + action.get();
        } catch (Throwable e) {
            return describe(e);
        }
    }

    /** {@link #outcome} of a future, bounded. */
    static String outcome(CompletableFuture<?> future, long seconds) {
        try {
            return "returned:" + future.get(seconds, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return describe(e.getCause());
        } catch (Exception e) {
            return describe(e);
        }
    }

    // Receiver-side state of the running rank; calls run by this JVM's workers update it.
    static final AtomicLong RAN = new AtomicLong();
    static final AtomicLong RAN_AFTER_FENCE = new AtomicLong();
    static final AtomicLong CORRUPT = new AtomicLong();
    static final AtomicLong OUT_OF_ORDER = new AtomicLong();
    static volatile long fencedAt;
    private static long lastSequence = -1; // one sending thread, one receiving worker: checked by that worker only

    static int block(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    /** Run by the receiver for each call of the stalled rank. */
    static void ranFromStalled() {
        RAN.incrementAndGet();
        if (fencedAt != 0) {
            RAN_AFTER_FENCE.incrementAndGet();
        }
    }

    /** The payload of call {@code sequence}: its length and bytes follow from the sequence alone. */
    static byte[] payload(long sequence, int maxBytes) {
        SplittableRandom random = new SplittableRandom(sequence);
        byte[] bytes = new byte[1 + random.nextInt(maxBytes)];
        random.nextBytes(bytes);
        return bytes;
    }

    /** Run by the receiver: a call that ran must carry its whole payload, and one-way calls arrive in order. */
    static long check(long sequence, byte[] bytes, int maxBytes, boolean ordered) {
        if (!Arrays.equals(bytes, payload(sequence, maxBytes))) {
            CORRUPT.incrementAndGet();
        }
        if (ordered) {
            RAN.incrementAndGet();
            if (sequence != lastSequence + 1) {
                OUT_OF_ORDER.incrementAndGet();
            }
            lastSequence = sequence;
        }
        return sequence;
    }

    public static void main(String[] args) throws Exception {
        String scenario = args[0];
        MessengerConfig messenger = scenario.equals("truncate") ? MessengerConfig.defaults().withChunks(12288, 2, 2)
                : MessengerConfig.defaults();
        FabricConfig config = FabricConfig.of(JobConfig.fromEnvironment(), LocalJob.registry()).withMessenger(messenger)
                .withCallTimeout(Duration.ofSeconds(20));
        FabricRuntime fabric = (FabricRuntime) Fabric.join(config);
        AtomicReference<String> firstError = new AtomicReference<>();
        fabric.onError((thread, error) -> {
            if (firstError.compareAndSet(null, thread + " " + describe(error))) {
                print("ERROR_REPORTED at=" + now() + " from=" + thread + " error=" + describe(error));
            }
        });
        ControlPlane plane = fabric.controlPlane();
        plane.addListener(new ControlPlaneListener() { // after the runtime's own: the fence is in place when it runs
            @Override
            public void peerFailed(int rank, io.fabricrpc.api.PeerFailedException failure) {
                if (fencedAt == 0) {
                    fencedAt = now();
                }
                print("VERDICT at=" + now() + " rank=" + rank + " reason=" + failure.reason().replace('\n', ' '));
            }
        });
        switch (scenario) {
            case "stall" -> FaultScenarios.stall(fabric);
            case "coordinator" -> FaultScenarios.coordinator(fabric);
            case "broadcast" -> FaultScenarios.broadcast(fabric);
            case "midstream" -> FaultScenarios.midstream(fabric);
            case "truncate" -> FaultScenarios.truncate(fabric, firstError);
            case "fill" -> FaultScenarios.fill(fabric);
            default -> throw new IllegalArgumentException("unknown scenario " + scenario);
        }
        print("END");
        block(Long.MAX_VALUE); // the test kills every rank: no rank's exit changes what another sees
    }

    static boolean isFailure(String outcome) {
        return outcome.startsWith(PeerFailedException.class.getSimpleName());
    }

    static Synchronizer consumed() {
        return new Synchronizer(Synchronizer.Mode.CONSUMED);
    }
}
