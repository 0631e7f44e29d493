package io.fabricrpc.benchmarks.table2;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.JobConfig;
import io.fabricrpc.api.MessengerConfig;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.serialization.CallDecoder;
import io.fabricrpc.serialization.CallEncoder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;

/**
 * JMH benchmarks of one call's path through the project's own classes, per payload size (Table 2's lambdas
 * capturing 1, 8 or 32 longs), in ns per call: {@code encode} (capture the lambda, encode it into a call record),
 * {@code decodeAndRun} (decode records from a segment and run them), {@code append} ({@code Fabric.call} to this
 * worker: capture, encode and append the record into the messenger's chunk) and {@code runFromChunk}
 * ({@code processCalls} over a batch appended beforehand: the receive path from the chunk). The fabric is a
 * one-process shm job calling itself, as in {@link CallCostBenchmark}. Each size runs in its own fork, so each call
 * site sees one lambda class. Run with {@code benchmarks/run-jmh.sh}.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class CallPathJmh {
    static final int BATCH = 1000;
    private static final long DRAIN_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(30);

    /** The codec alone: an encoder, a decoder that has learnt the lambda class, a batch of encoded records. */
    @State(Scope.Thread)
    public static class Codec {
        @Param({"8", "64", "256"})
        int size;
        CallEncoder encoder;
        CallDecoder decoder;
        MemorySegment scratch;
        MemorySegment batch;
        long batchEnd;
        long next;

        @Setup(Level.Trial)
        public void setUp() {
            encoder = new CallEncoder(Payloads.registry(), "jmh");
            decoder = new CallDecoder(Payloads.registry(), "jmh");
            scratch = Arena.ofAuto().allocate(512, Long.BYTES);
            batch = Arena.ofAuto().allocate(BATCH * 512L, Long.BYTES);
            // The first record of a lambda class carries its definition: encoded and decoded once, before the batch.
            long first = encoder.encode(Payloads.call(size, 0), scratch, 0, scratch.byteSize());
            decoder.invoke(scratch, 0, first, null);
            for (int i = 0; i < BATCH; i++) {
                batchEnd += encoder.encode(Payloads.call(size, i), batch, batchEnd, batch.byteSize());
            }
        }
    }

    /** A one-process fabric whose worker 0 is the benchmark thread; counts the calls appended and run. */
    @State(Scope.Thread)
    public static class Self {
        @Param({"8", "64", "256"})
        int size;
        Fabric fabric;
        ThreadId self;
        long next;
        long pending;

        @Setup(Level.Trial)
        public void join() {
            JobConfig job = JobConfig.builder().rank(0).size(1).threadsPerProcess(1).coordinator("127.0.0.1", 0)
                    .jobSecret(HexFormat.of().formatHex(new SecureRandom().generateSeed(16)))
                    .joinTimeout(Duration.ofSeconds(30)).build();
            // Room for a whole batch in the messenger's chunks, or the sender would run calls itself.
            fabric = Fabric.join(FabricConfig.of(job, Payloads.registry())
                    .withMessenger(MessengerConfig.defaults().withChunks(1 << 20, 2, 16)));
            fabric.attach(0);
            self = fabric.self();
        }

        @TearDown(Level.Trial)
        public void close() {
            fabric.close();
        }

        void appendBatch() {
            for (int i = 0; i < BATCH; i++) {
                if (!fabric.call(self, Payloads.call(size, next++))) {
                    throw new IllegalStateException("a call was refused: the batch does not fit the chunks");
                }
            }
            pending += BATCH;
        }

        /** Runs every call appended so far; bounded: a lost call fails the run. */
        int runAll() {
            fabric.flush();
            long start = System.nanoTime();
            int ran = 0;
            while (pending > 0) {
                int n = fabric.processCalls();
                pending -= n;
                ran += n;
                if (n == 0 && System.nanoTime() - start > DRAIN_TIMEOUT_NANOS) {
                    throw new IllegalStateException(pending + " calls of " + size + " B had not run after "
                            + TimeUnit.NANOSECONDS.toMillis(DRAIN_TIMEOUT_NANOS) + " ms");
                }
            }
            return ran;
        }
    }

    /** For {@link #append}: what an invocation appended runs afterwards, untimed, so each starts with empty chunks. */
    public static class Appending extends Self {
        @TearDown(Level.Invocation)
        public void drain() {
            runAll();
        }
    }

    /** For {@link #runFromChunk}: a batch appended before each invocation, untimed. */
    public static class Filled extends Self {
        @Setup(Level.Invocation)
        public void fill() {
            appendBatch();
            fabric.flush();
        }
    }

    @Benchmark
    public int encode(Codec codec) {
        return codec.encoder.encode(Payloads.call(codec.size, codec.next++), codec.scratch, 0, codec.scratch.byteSize());
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long decodeAndRun(Codec codec) {
        long at = 0;
        while (at < codec.batchEnd) {
            at = codec.decoder.invoke(codec.batch, at, codec.batchEnd, null);
        }
        return at;
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public long append(Appending state) {
        state.appendBatch();
        return state.next;
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public int runFromChunk(Filled state) {
        return state.runAll();
    }
}
