package io.fabricrpc.invocation;

import io.fabricrpc.api.BarrierTimeoutException;
import io.fabricrpc.api.RemoteRunnable;
import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.api.ThreadId;

import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * Barriers and sum reductions over every worker thread of the job, built on calls and a broadcast: each worker
 * calls the coordinating worker (rank 0, index 0) with its generation and value, and once all P x T workers have
 * arrived at generation g the coordinator broadcasts (g, sum). Invariant: generation g is released only after every
 * worker arrived at g, so no worker passes g before all reached it. Each worker's barrier state, the coordinator's
 * count included, lives in its {@link ThreadContext} ({@link Barriers}) and is touched by its worker's thread only.
 * The lambdas here are allowed in every registry (SerializationRegistry's fabric capturing class).
 */
final class Collectives {
    static final ThreadId COORDINATOR = new ThreadId(0, 0);

    private Collectives() {
    }

    /** A worker's barriers: those it entered, the last one released to it, that one's sum; confined to its thread. */
    static final class Barriers {
        long generation;
        long released;
        long value;
        /** Worker (0, 0)'s only: the count of the generation it gathers, made on first use. */
        private Gathering gathering;

        Gathering gathering() {
            if (gathering == null) {
                gathering = new Gathering();
            }
            return gathering;
        }
    }

    /** The coordinator's count for the generation being gathered; confined to worker (0, 0)'s thread. */
    static final class Gathering {
        long released;
        long sum;
        int arrived;
        final BitSet workers = new BitSet();
    }

    /** Arrives with {@code value}, runs incoming calls until the generation is released, returns the sum. */
    static long allReduceSum(FabricRuntime runtime, ThreadContext context, long value, Duration timeout, String what) {
        if (context.workerIndex < 0) {
            throw new IllegalStateException(what + " on thread '" + Thread.currentThread().getName()
                    + "', which is not an attached worker: every worker of every process takes part");
        }
        if (context.inProcessCalls) {
            throw new IllegalStateException(what + " inside a call run by worker " + runtime.self()
                    + ": the worker could not run the calls that release it");
        }
        long generation = ++context.barriers.generation;
        int from = runtime.rank() * runtime.threadsPerProcess() + context.workerIndex;
        long deadline = System.nanoTime() + timeout.toNanos();
        int polls = 0;
        // View 0, the plain channels: a barrier must not sit in an aggregator's batch.
        RemoteRunnable arrival = () -> arrive(generation, value, from);
        while (!runtime.callInView(0, COORDINATOR, arrival, null)) {
            polls = pause(runtime, context, generation, deadline, timeout, polls, what); // FAIL policy, buffers full
        }
        while (context.barriers.released < generation) {
            polls = pause(runtime, context, generation, deadline, timeout, polls, what);
        }
        return context.barriers.value;
    }

    /** Runs incoming calls (the release among them); every 256 rounds checks the peers and the deadline. */
    private static int pause(FabricRuntime runtime, ThreadContext context, long generation, long deadline,
                             Duration timeout, int polls, String what) {
        runtime.help();
        if ((++polls & 255) == 0) {
            for (int rank = 0; rank < runtime.size(); rank++) {
                PeerFailedException gone = runtime.controlPlane().departure(rank); // volatile read
                if (gone != null) {
                    throw new PeerFailedException(rank, what + " generation " + generation + " of "
                            + runtime.threadCount() + " workers cannot complete: " + gone.reason(),
                            gone.isOrderlyDeparture(), gone);
                }
            }
            if (System.nanoTime() - deadline > 0) {
                throw new BarrierTimeoutException(what + " generation " + generation + " of " + runtime.threadCount()
                        + " workers (" + runtime.size() + " processes x " + runtime.threadsPerProcess()
                        + " threads) not released within " + timeout.toMillis() + " ms at worker " + runtime.self()
                        + "; " + coordinatorView(runtime, context));
            }
            Thread.yield();
        }
        Thread.onSpinWait();
        return polls;
    }

    private static String coordinatorView(FabricRuntime runtime, ThreadContext context) {
        if (runtime.rank() != 0 || context.workerIndex != 0) {
            return "waiting for the release from coordinator " + COORDINATOR;
        }
        Gathering gathering = context.barriers.gathering();
        List<ThreadId> missing = new ArrayList<>();
        for (int w = 0; w < runtime.threadCount() && missing.size() < 16; w++) {
            if (!gathering.workers.get(w)) {
                missing.add(new ThreadId(w / runtime.threadsPerProcess(), w % runtime.threadsPerProcess()));
            }
        }
        return "at the coordinator " + gathering.arrived + " of " + runtime.threadCount() + " arrived, missing "
                + missing + (missing.size() == 16 ? "..." : "");
    }

    /** At the coordinator: counts one worker's arrival, and releases the generation with the last one. */
    private static void arrive(long generation, long value, int from) {
        FabricRuntime runtime = FabricRuntime.current();
        Gathering gathering = runtime.threadContext().barriers.gathering(); // runs on worker (0, 0)
        if (generation != gathering.released + 1 || gathering.workers.get(from)) {
            throw new IllegalStateException("barrier arrival of worker " + from + " for generation " + generation
                    + ", but the coordinator gathers generation " + (gathering.released + 1) + (gathering.workers.get(from)
                    ? " and that worker arrived already" : "") + ": workers made different numbers of barrier calls,"
                    + " or an earlier barrier failed");
        }
        gathering.workers.set(from);
        gathering.sum += value;
        if (++gathering.arrived == runtime.threadCount()) {
            long sum = gathering.sum;
            gathering.released = generation;
            gathering.sum = 0;
            gathering.arrived = 0;
            gathering.workers.clear();
            runtime.broadcast(() -> release(generation, sum), null);
        }
    }

    /** On every worker, by the broadcast: the generation is complete. */
    private static void release(long generation, long sum) {
        ThreadContext context = FabricRuntime.current().threadContext();
        context.barriers.value = sum;
        context.barriers.released = generation;
    }
}
