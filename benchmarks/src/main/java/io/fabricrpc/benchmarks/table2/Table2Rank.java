package io.fabricrpc.benchmarks.table2;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.RemoteRunnable;
import io.fabricrpc.benchmarks.CpuAffinity;
import io.fabricrpc.benchmarks.SharedRingFile;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.api.MessengerConfig;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static io.fabricrpc.benchmarks.table2.Table2FileDescriptor.*;

/**
 * One process of a Table 2 run, started by {@link Table2Benchmark} through the fabric's launcher (ranks from the
 * environment). Rank 0's worker 0 is the sender and drives the run; rank 1's worker 0 is the receiver. Each
 * thread is pinned to its CPU, builds every column, then they follow the commands of the shared control block
 * ({@link Table2FileDescriptor}). Rank 0 prints one {@code T2 RESULT} line per measurement, which the launching
 * benchmark collects; any failure exits 1 with the offending values.
 */
@Command(name = "table2-rank", mixinStandardHelpOptions = true, description = "One rank of the Table 2 benchmark.")
public final class Table2Rank implements Callable<Integer> {
    static final String RESULT = "T2 RESULT";
    static final String LAMBDA = "T2 LAMBDA";
    /** {@code T2 JIT <phase> <rank 0 ms> <rank 1 ms>}: each JVM's total JIT compilation time when the phase ended. */
    static final String JIT = "T2 JIT";
    static final String JIT_WARMUP = "warmup";
    static final String JIT_ROUNDS = "rounds";
    /** Test hook (a system property of the ranks): rank 0 dies once every round is measured, as in a teardown. */
    static final String HALT_AFTER_MEASURING = "table2.test.haltAfterMeasuring";
    /** With a gate, a receiver that waited this long for a command parks 1 ms at a time. */
    private static final long LONG_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    @Option(names = "--columns", split = ",", required = true)
    List<String> columns;
    @Option(names = "--sizes", split = ",", required = true)
    List<Integer> sizes;
    @Option(names = "--rounds", required = true)
    int rounds;
    @Option(names = "--seconds", required = true)
    double seconds;
    @Option(names = "--slice", required = true)
    double slice;
    @Option(names = "--warmup", required = true)
    double warmup;
    @Option(names = "--file", required = true)
    Path file;
    @Option(names = "--ring-capacity", required = true)
    int ringCapacity;
    @Option(names = "--aeron-term-length", required = true)
    int aeronTermLength;
    @Option(names = "--chunk-size", required = true)
    int chunkSize;
    @Option(names = "--c", required = true)
    int c;
    @Option(names = "--cmax", required = true)
    int cMax;
    @Option(names = "--sender-cpu", defaultValue = "-1")
    int senderCpu;
    @Option(names = "--receiver-cpu", defaultValue = "-1")
    int receiverCpu;
    @Option(names = "--timeout-ms", defaultValue = "60000")
    long timeoutMillis;
    @Option(names = "--gate-timeout-ms", defaultValue = "0",
            description = "If > 0, rank 0 waits at the round gate before each round for the launching benchmark"
                    + " (which runs its baselines meanwhile), at most this long.")
    long gateTimeoutMillis;
    @Option(names = "--raw-file", description = "Rank 0 appends each result line here as soon as it is measured.")
    Path rawFile;

    /** Lambda objects kept reachable while their size is measured. */
    static volatile Object kept;

    public static void main(String[] args) {
        int exit;
        try {
            exit = new CommandLine(new Table2Rank()).execute(args);
        } catch (Throwable t) {
            t.printStackTrace();
            exit = 1;
        }
        System.out.flush();
        System.exit(exit);
    }

    static MessengerConfig messengerConfig(int chunkSize, int c, int cMax) {
        return MessengerConfig.defaults().withChunks(chunkSize, c, cMax);
    }

    @Override
    public Integer call() throws Exception {
        FabricConfig config = FabricConfig.fromEnvironment(Payloads.registry())
                .withMessenger(messengerConfig(chunkSize, c, cMax));
        try (SharedRingFile shared = SharedRingFile.open(file, fileLength(ringCapacity));
             Fabric fabric = Fabric.join(config)) {
            if (fabric.size() != 2 || fabric.threadsPerProcess() != 1) {
                throw new IllegalStateException("Table 2 runs 2 processes x 1 thread, got " + fabric.size() + " x "
                        + fabric.threadsPerProcess());
            }
            UnsafeBuffer control = new UnsafeBuffer(shared.buffer(), 0, CONTROL_LENGTH);
            UnsafeBuffer ring = new UnsafeBuffer(shared.buffer(), RING_OFFSET, ringLength(ringCapacity));
            Throwable[] failure = new Throwable[1];
            Thread worker = Thread.ofPlatform().name("table2-" + (fabric.rank() == 0 ? "sender" : "receiver"))
                    .start(() -> {
                        List<Column> built = new ArrayList<>();
                        try {
                            fabric.attach(0);
                            ThreadId peer = new ThreadId(1 - fabric.rank(), 0);
                            Columns.Context context = new Columns.Context(fabric, peer, ring, aeronTermLength, control,
                                    aeronDirectory(file), timeoutMillis);
                            // Built before pinning: threads a column starts (Aeron's driver) would inherit the pin.
                            for (String name : columns) {
                                built.add(Columns.create(name, context));
                            }
                            int cpu = fabric.rank() == 0 ? senderCpu : receiverCpu;
                            if (cpu >= 0) {
                                CpuAffinity.pinCurrentThread(cpu);
                            }
                            if (fabric.rank() == 0) {
                                new Sender(control, built).run();
                            } else {
                                new Receiver(control, built).run();
                            }
                        } catch (Throwable t) {
                            failure[0] = t;
                        } finally {
                            for (Column column : built) {
                                column.close();
                            }
                        }
                    });
            worker.join();
            if (fabric.rank() == 0 && Boolean.getBoolean(HALT_AFTER_MEASURING)) {
                System.out.flush();
                Runtime.getRuntime().halt(134); // as UCX's abort() in a worker's teardown did
            }
            if (failure[0] != null) {
                failure[0].printStackTrace(System.out);
                // Last, so that the launcher's report (each rank's last lines) shows it when output is not forwarded.
                System.out.println("rank " + fabric.rank() + " failed: " + failure[0]);
                return 1;
            }
        }
        return 0;
    }

    /** The {@code aeron-ipc} baseline's driver directory of this run: next to the run's shared file, as private. */
    static Path aeronDirectory(Path sharedFile) {
        return sharedFile.resolveSibling(sharedFile.getFileName() + ".aeron");
    }

    /** This JVM's JIT compilation time so far; -1 where the JVM does not report it. */
    static long jitMillis() {
        CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        return jit != null && jit.isCompilationTimeMonitoringSupported() ? jit.getTotalCompilationTime() : -1;
    }

    private long timeoutNanos() {
        return TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    }

    /** Rank 0: drives every measurement and prints the results. */
    private final class Sender {
        private final UnsafeBuffer control;
        private final List<Column> built;
        private final ProcessAllocation others = new ProcessAllocation();
        /** Busy: the sender's waits are inside (or right next to) the timed interval, parking would add to it. */
        private final IdleStrategy spin = new BusySpinIdleStrategy();
        private long sequence;
        private long nextCall;

        Sender(UnsafeBuffer control, List<Column> built) {
            this.control = control;
            this.built = built;
        }

        void run() {
            await(READY_OFFSET, 1, "the receiver to join and build its columns");
            for (int size : sizes) {
                System.out.printf(Locale.ROOT, "%s %d %.1f%n", LAMBDA, size, lambdaBytes(size));
            }
            long warmupNanos = (long) (warmup * 1e9 / 2);
            if (warmupNanos > 0) {
                for (int pass = 0; pass < 2; pass++) {
                    for (int size : sizes) {
                        for (int col = 0; col < built.size(); col++) {
                            measure(col, size, warmupNanos);
                        }
                    }
                }
            }
            printJit(JIT_WARMUP);
            long sliceNanos = (long) (slice * 1e9);
            int slices = Math.max(1, (int) Math.round(seconds / slice));
            for (int round = 0; round < rounds; round++) {
                gate(round);
                for (int size : sizes) {
                    long[][] total = new long[built.size()][8];
                    for (int s = 0; s < slices; s++) {
                        for (int position = 0; position < built.size(); position++) {
                            int col = (position + round + s) % built.size(); // every column leads in turn
                            long[] m = measure(col, size, sliceNanos);
                            for (int k = 0; k < m.length; k++) {
                                total[col][k] += m[k];
                            }
                        }
                    }
                    StringBuilder progress = new StringBuilder();
                    for (int position = 0; position < built.size(); position++) {
                        int col = (position + round) % built.size();
                        long[] m = total[col];
                        String line = new Table2Result(round, built.get(col).name(), size, position, m[0], m[1], m[2],
                                m[3], m[4], m[5], m[6], m[7]).line();
                        System.out.println(line);
                        if (rawFile != null) {
                            Table2RawFile.append(rawFile, line); // now: a crash later in the run cannot take it back
                        }
                        progress.append(String.format(Locale.ROOT, " %s %,.0f/s", built.get(col).name(), m[0] * 1e9 / m[1]));
                    }
                    System.out.printf(Locale.ROOT, "round %d, %d B:%s%n", round, size, progress);
                }
            }
            printJit(JIT_ROUNDS);
            command(COLUMN_STOP, 0);
        }

        /** The receiver's total is the one it wrote with its last result line (each measurement's end). */
        private void printJit(String phase) {
            System.out.printf(Locale.ROOT, "%s %s %d %d%n", JIT, phase, jitMillis(),
                    control.getLong(RESULT_JIT_MILLIS_OFFSET));
        }

        /**
         * With a gate: asks the launching benchmark to run its baselines of {@code round} and waits, idle (the
         * baselines need the CPUs), until it grants the round.
         */
        private void gate(int round) {
            if (gateTimeoutMillis <= 0) {
                return;
            }
            long value = round + 1;
            control.putLongRelease(GATE_REQUEST_OFFSET, value); // release: pairs with the benchmark's acquire
            IdleStrategy parked = new org.agrona.concurrent.BackoffIdleStrategy(10, 10, 100_000, 1_000_000);
            long start = System.nanoTime();
            long seen;
            while ((seen = control.getLongAcquire(GATE_GRANT_OFFSET)) != value) { // pairs with the grant's release
                if (System.nanoTime() - start > TimeUnit.MILLISECONDS.toNanos(gateTimeoutMillis)) {
                    throw new IllegalStateException("waited " + gateTimeoutMillis + " ms at the gate of round " + round
                            + " for the benchmark's baselines: grant is " + seen + ", expected " + value);
                }
                parked.idle();
            }
        }

        /**
         * One measurement: {calls, nanos, bytes allocated by the sender thread, by the receiver thread, by the other
         * threads of the sender's process, by the other threads of the receiver's process, CPU nanoseconds of the
         * sender thread, of the receiver thread}.
         */
        long[] measure(int col, int size, long durationNanos) {
            Column column = built.get(col);
            command(col, size);
            long first = nextCall;
            others.start();
            long allocatedBefore = THREADS.getCurrentThreadAllocatedBytes();
            long cpuBefore = THREADS.getCurrentThreadCpuTime();
            long start = System.nanoTime();
            long calls = column.sendUntil(size, first, start + durationNanos);
            column.flush();
            awaitReceived(column, size, calls);
            long elapsed = System.nanoTime() - start;
            long senderCpu = THREADS.getCurrentThreadCpuTime() - cpuBefore;
            long senderBytes = THREADS.getCurrentThreadAllocatedBytes() - allocatedBefore;
            long senderOthers = others.stop();
            command(COLUMN_PAUSE, 0);
            // The receiver wrote its result line before its ack (release), which command() loaded with acquire.
            long receiverBytes = control.getLong(RESULT_ALLOCATED_OFFSET);
            long sum = control.getLong(RESULT_SUM_OFFSET);
            long count = control.getLong(RESULT_COUNT_OFFSET);
            long receiverOthers = control.getLong(RESULT_OTHERS_ALLOCATED_OFFSET);
            long receiverCpu = control.getLong(RESULT_CPU_NANOS_OFFSET);
            long expected = column.expectedSum(size, first, calls);
            if (count != calls || sum != expected) {
                throw new IllegalStateException(column.name() + ", " + size + " B: receiver ran " + count + " calls with sum "
                        + sum + ", sender sent " + calls + " (calls " + first + ".." + (first + calls - 1)
                        + ") with sum " + expected);
            }
            nextCall += calls;
            return new long[] {calls, elapsed, senderBytes, receiverBytes, senderOthers, receiverOthers, senderCpu,
                    receiverCpu};
        }

        /** Issues a command and waits for the receiver's ack. */
        private void command(int column, int size) {
            control.putInt(COMMAND_COLUMN_OFFSET, column);
            control.putInt(COMMAND_PAYLOAD_OFFSET, size);
            sequence++;
            control.putLongRelease(COMMAND_SEQUENCE_OFFSET, sequence); // release: column and size visible first
            await(ACK_SEQUENCE_OFFSET, sequence, "the receiver to ack command " + sequence + " (column " + column
                    + ", " + size + " B)");
        }

        private void awaitReceived(Column column, int size, long calls) {
            long start = System.nanoTime();
            int polls = 0;
            long received;
            while ((received = control.getLongAcquire(RECEIVED_OFFSET)) != calls) { // pairs with the receiver's release
                if (received > calls) {
                    throw new IllegalStateException(column.name() + ", " + size + " B: receiver ran " + received
                            + " calls, only " + calls + " were sent");
                }
                if ((++polls & 1023) == 0 && System.nanoTime() - start > timeoutNanos()) {
                    throw new IllegalStateException(column.name() + ", " + size + " B: receiver ran " + received + " of "
                            + calls + " calls and nothing more for " + timeoutMillis + " ms");
                }
                spin.idle();
            }
        }

        private void await(int offset, long value, String what) {
            long start = System.nanoTime();
            long seen;
            while ((seen = control.getLongAcquire(offset)) != value) { // pairs with the receiver's release stores
                if (System.nanoTime() - start > timeoutNanos()) {
                    throw new IllegalStateException("waited " + timeoutMillis + " ms for " + what + ": word at offset "
                            + offset + " is " + seen + ", expected " + value);
                }
                spin.idle();
            }
        }

        /** Bytes one call's lambda object takes (allocated per call by the caller, whatever the column). */
        private double lambdaBytes(int size) {
            int n = 100_000;
            double bytes = 0;
            for (int pass = 0; pass < 3; pass++) {
                long before = THREADS.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < n; i++) {
                    RemoteRunnable call = Payloads.call(size, i);
                    kept = call;
                }
                bytes = (THREADS.getCurrentThreadAllocatedBytes() - before) / (double) n;
            }
            kept = null;
            return bytes;
        }
    }

    /** Rank 1: runs each measurement's calls until the sender pauses it. */
    private final class Receiver {
        private final UnsafeBuffer control;
        private final List<Column> built;
        private final IdleStrategy idle = RawRingColumn.newIdleStrategy();
        private final ProcessAllocation others = new ProcessAllocation();

        Receiver(UnsafeBuffer control, List<Column> built) {
            this.control = control;
            this.built = built;
        }

        void run() {
            control.putLongRelease(READY_OFFSET, 1); // release: the columns are built
            long seen = 0;
            while (true) {
                long sequence = awaitCommand(seen);
                int col = control.getInt(COMMAND_COLUMN_OFFSET); // written before the sequence we acquired
                seen = sequence;
                if (col == COLUMN_STOP) {
                    control.putLongRelease(ACK_SEQUENCE_OFFSET, sequence);
                    return;
                }
                if (col < 0 || col >= built.size()) {
                    throw new IllegalStateException("command " + sequence + " names column " + col + " of "
                            + built.size());
                }
                seen = receive(built.get(col), sequence, control.getInt(COMMAND_PAYLOAD_OFFSET));
            }
        }

        private long awaitCommand(long seen) {
            long start = System.nanoTime();
            long sequence;
            idle.reset();
            while ((sequence = control.getLongAcquire(COMMAND_SEQUENCE_OFFSET)) == seen) { // pairs with the sender's release
                // The sender may sit at the round gate meanwhile (the baselines run).
                if (System.nanoTime() - start > timeoutNanos() + TimeUnit.MILLISECONDS.toNanos(gateTimeoutMillis)) {
                    throw new IllegalStateException("no command after " + seen + " for " + (timeoutMillis
                            + gateTimeoutMillis) + " ms");
                }
                if (gateTimeoutMillis > 0 && System.nanoTime() - start > LONG_WAIT_NANOS) {
                    // Long wait: the baselines run now; wake rarely so that they have the CPUs (untimed interval).
                    LockSupport.parkNanos(1_000_000);
                } else {
                    idle.idle();
                }
            }
            return sequence;
        }

        /** Runs one measurement; returns the sequence of the pause command that ended it (acked). */
        private long receive(Column column, long sequence, int size) {
            Payloads.Sink.reset();
            control.putLongRelease(RECEIVED_OFFSET, 0);
            others.start();
            long allocatedBefore = THREADS.getCurrentThreadAllocatedBytes();
            long cpuBefore = THREADS.getCurrentThreadCpuTime();
            control.putLongRelease(ACK_SEQUENCE_OFFSET, sequence); // release: the counters are reset
            long limit = (long) (Math.max(seconds, warmup) * 1e9) + 2 * timeoutNanos();
            long start = System.nanoTime();
            idle.reset();
            long next;
            while (true) {
                int ran = column.poll();
                if (ran > 0) {
                    control.putLongRelease(RECEIVED_OFFSET, Payloads.Sink.count); // release: the calls have run
                    idle.reset();
                    continue;
                }
                if ((next = control.getLongAcquire(COMMAND_SEQUENCE_OFFSET)) != sequence) {
                    break;
                }
                if (System.nanoTime() - start > limit) {
                    throw new IllegalStateException(column.name() + ", " + size + " B: still measuring after "
                            + TimeUnit.NANOSECONDS.toMillis(limit) + " ms (" + Payloads.Sink.count + " calls run)");
                }
                idle.idle();
            }
            long cpu = THREADS.getCurrentThreadCpuTime() - cpuBefore;
            long allocated = THREADS.getCurrentThreadAllocatedBytes() - allocatedBefore;
            long othersAllocated = others.stop();
            if (control.getInt(COMMAND_COLUMN_OFFSET) != COLUMN_PAUSE) {
                throw new IllegalStateException("measurement of " + column.name() + " ended by command " + next
                        + " (column " + control.getInt(COMMAND_COLUMN_OFFSET) + "), expected a pause");
            }
            control.putLong(RESULT_ALLOCATED_OFFSET, allocated);
            control.putLong(RESULT_SUM_OFFSET, Payloads.Sink.sum);
            control.putLong(RESULT_COUNT_OFFSET, Payloads.Sink.count);
            control.putLong(RESULT_OTHERS_ALLOCATED_OFFSET, othersAllocated);
            control.putLong(RESULT_JIT_MILLIS_OFFSET, jitMillis()); // before the ack's release, like the rest
            control.putLong(RESULT_CPU_NANOS_OFFSET, cpu);
            control.putLongRelease(ACK_SEQUENCE_OFFSET, next); // release: the result line is written
            return next;
        }
    }
}
