package io.fabricrpc.benchmarks.table2;

import io.fabricrpc.api.RemoteRunnable;
import io.fabricrpc.benchmarks.Report;
import io.fabricrpc.serialization.CallDecoder;
import io.fabricrpc.serialization.CallEncoder;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * The codec half of a Table 2 call, in one thread, against the same longs moved raw: {@code codec} builds call i
 * ({@link Payloads}), encodes it into a segment and decodes and invokes it there; {@code raw} stores the call's longs
 * into the segment and loads and sums them (the work Agrona's ring column does on its two sides, without the ring).
 * Batches of {@value #BATCH} calls, slices alternating codec and raw with a rotating first one, ratio per round,
 * median over rounds. Shows what the lambda codec costs per call under the JIT at hand (C2, or C1 with
 * {@code -XX:TieredStopAtLevel=1} as in the emulated RDMA guest), and the bytes it adds per call.
 */
@Command(name = "codec-benchmark", mixinStandardHelpOptions = true,
        description = "Lambda codec (encode + decode + invoke) against raw stores and loads of the same longs.")
public final class CodecBenchmark implements Callable<Integer> {
    static final int BATCH = 256;
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    @Option(names = "--rounds", defaultValue = "9", description = "Rounds per size (default ${DEFAULT-VALUE}).")
    int rounds;
    @Option(names = "--slice", defaultValue = "0.2", description = "Seconds per slice (default ${DEFAULT-VALUE}).")
    double slice;
    @Option(names = "--warmup", defaultValue = "2", description = "Warm-up seconds per size (default ${DEFAULT-VALUE}).")
    double warmup;
    @Option(names = "--sizes", split = ",", defaultValue = "8,64,256", description = "Payload sizes (default ${DEFAULT-VALUE}).")
    List<Integer> sizes;
    @Option(names = "--output", required = true, description = "Markdown report to write.")
    Path output;
    @Option(names = "--note", defaultValue = "", description = "A line for the report's notes.")
    String note;

    private final MemorySegment segment = Arena.ofAuto().allocate(BATCH * 512L, Long.BYTES);
    /** The raw sums land here, a field, so the JIT cannot drop them. */
    private long blackhole;

    public static void main(String[] args) {
        System.exit(new CommandLine(new CodecBenchmark()).execute(args));
    }

    /** One size: medians and per-round ratios. */
    record Row(int size, double codecNanos, double rawNanos, double medianRatio, double minRatio, double maxRatio,
               double allocatedPerCall, int recordBytes) {
    }

    @Override
    public Integer call() throws Exception {
        for (int size : sizes) {
            if (!Payloads.isSupported(size)) {
                throw new CommandLine.ParameterException(new CommandLine(this), "sizes must be 8, 64 or 256, got " + size);
            }
        }
        double loadBefore = Report.Machine.loadAverage();
        Report.Machine machine = Report.Machine.describe();
        List<Row> rows = new ArrayList<>();
        for (int size : sizes) {
            rows.add(measure(size));
        }
        double loadAfter = Report.Machine.loadAverage();
        String md = markdown(machine, loadBefore, loadAfter, rows);
        Files.createDirectories(output.toAbsolutePath().getParent());
        Files.writeString(output, md);
        System.out.print(md);
        return 0;
    }

    private Row measure(int size) {
        CallEncoder encoder = new CallEncoder(Payloads.registry(), "codec-benchmark");
        CallDecoder decoder = new CallDecoder(Payloads.registry(), "codec-benchmark");
        long next = codecBatch(size, encoder, decoder, 0); // the first carries the definition: the decoder learns it
        long warmEnd = System.nanoTime() + (long) (warmup * 1e9);
        while (System.nanoTime() < warmEnd) {
            next += codecBatch(size, encoder, decoder, next);
            rawBatch(size, next);
        }
        int recordBytes = encoder.encode(Payloads.call(size, 0), segment, 0, segment.byteSize()); // id only now
        double[] ratios = new double[rounds];
        double[] codecNs = new double[rounds];
        double[] rawNs = new double[rounds];
        long allocated = 0;
        long allocatedCalls = 0;
        for (int r = 0; r < rounds; r++) {
            long codecCalls = 0;
            long codecTime = 0;
            long rawCalls = 0;
            long rawTime = 0;
            for (int half = 0; half < 2; half++) {
                boolean codecNow = (r + half) % 2 == 0; // rotate which goes first
                long sliceEnd = System.nanoTime() + (long) (slice * 1e9);
                long start = System.nanoTime();
                long bytesBefore = THREADS.getCurrentThreadAllocatedBytes();
                long calls = 0;
                do {
                    if (codecNow) {
                        next += codecBatch(size, encoder, decoder, next);
                    } else {
                        rawBatch(size, next);
                    }
                    calls += BATCH;
                } while (System.nanoTime() < sliceEnd);
                long elapsed = System.nanoTime() - start;
                if (codecNow) {
                    allocated += THREADS.getCurrentThreadAllocatedBytes() - bytesBefore;
                    allocatedCalls += calls;
                    codecCalls += calls;
                    codecTime += elapsed;
                } else {
                    rawCalls += calls;
                    rawTime += elapsed;
                }
            }
            codecNs[r] = (double) codecTime / codecCalls;
            rawNs[r] = (double) rawTime / rawCalls;
            ratios[r] = rawNs[r] / codecNs[r]; // codec calls/s over raw calls/s
        }
        double[] sorted = ratios.clone();
        Arrays.sort(sorted);
        return new Row(size, Table2Report.median(codecNs), Table2Report.median(rawNs), Table2Report.median(ratios), sorted[0], sorted[sorted.length - 1],
                (double) allocated / allocatedCalls, recordBytes);
    }

    /** Encodes calls {@code first..first+BATCH-1}, then decodes and invokes them; returns the calls made. */
    private int codecBatch(int size, CallEncoder encoder, CallDecoder decoder, long first) {
        long end = 0;
        long limit = segment.byteSize();
        // One loop per size: each call site sees one lambda class, as in FabricColumn.
        switch (size) {
            case 8 -> {
                for (int b = 0; b < BATCH; b++) {
                    end += encoder.encode(Payloads.capture1(first + b), segment, end, limit);
                }
            }
            case 64 -> {
                for (int b = 0; b < BATCH; b++) {
                    end += encoder.encode(Payloads.capture8(first + b), segment, end, limit);
                }
            }
            default -> {
                for (int b = 0; b < BATCH; b++) {
                    end += encoder.encode(Payloads.capture32(first + b), segment, end, limit);
                }
            }
        }
        long at = 0;
        while (at < end) {
            at = decoder.invoke(segment, at, end, null);
        }
        return BATCH;
    }

    /** Stores the longs of calls {@code first..} (call i: i, i+1, ...), then loads and sums each call's. */
    private void rawBatch(int size, long first) {
        // A literal count per size, so that the JIT unrolls the loops once this small method is inlined.
        blackhole += switch (size) {
            case 8 -> raw(segment, first, 1);
            case 64 -> raw(segment, first, 8);
            default -> raw(segment, first, 32);
        };
    }

    private static long raw(MemorySegment segment, long first, int longs) {
        long stride = (long) longs * Long.BYTES;
        for (int b = 0; b < BATCH; b++) {
            long base = b * stride;
            long value = first + b;
            for (int k = 0; k < longs; k++) {
                segment.set(LONG, base + (long) k * Long.BYTES, value + k);
            }
        }
        long total = 0;
        for (int b = 0; b < BATCH; b++) {
            long base = b * stride;
            long sum = 0;
            for (int k = 0; k < longs; k++) {
                sum += segment.get(LONG, base + (long) k * Long.BYTES);
            }
            total += sum;
        }
        return total;
    }

    private String markdown(Report.Machine machine, double loadBefore, double loadAfter, List<Row> rows) {
        StringBuilder md = new StringBuilder("# Lambda codec against raw longs, one thread\n\n");
        md.append("Written by `benchmarks/run-codec-bench.sh` (`io.fabricrpc.benchmarks.table2.CodecBenchmark`). `codec`:"
                + " build Table 2's call i (a lambda capturing 1, 8 or 32 longs), encode it into a native segment,"
                + " then decode and invoke it (the body sums the captures). `raw`: store the same longs, then load"
                + " and sum them. Batches of ").append(BATCH).append(" calls; slices alternate codec and raw with a"
                + " rotating first one; ratio = codec calls/s / raw calls/s per round, median over rounds.\n\n");
        machine.appendMarkdown(md, loadBefore, loadAfter);
        md.append("## Parameters\n\n");
        md.append(String.format(Locale.ROOT, "%d rounds x 2 slices of %s s per size, warm-up %s s per size; JVM"
                        + " input arguments: %s%n%n", rounds, slice, warmup,
                ManagementFactory.getRuntimeMXBean().getInputArguments()));
        md.append("## Results\n\n");
        md.append("| size (B) | codec ns/call | raw ns/call | codec/raw (calls/s) | rounds min .. max |"
                + " codec B allocated/call | record B | bytes beyond the captures |\n");
        md.append("|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Row row : rows) {
            md.append(String.format(Locale.ROOT, "| %d | %.1f | %.1f | **%.2fx** | %.2fx .. %.2fx | %.1f | %d | %d |%n",
                    row.size(), row.codecNanos(), row.rawNanos(), row.medianRatio(), row.minRatio(), row.maxRatio(),
                    row.allocatedPerCall(), row.recordBytes(), row.recordBytes() - row.size()));
        }
        md.append("\nThe codec's allocation per call is the lambda object the caller builds (24, 80 or 272 B); the"
                + " encoder and decoder allocate nothing. `bytes beyond the captures`: the record's tag and length"
                + " (issue 3's target: at most 8).\n");
        if (!note.isBlank()) {
            md.append("\n## Notes\n\n").append(note).append('\n');
        }
        return md.toString();
    }
}
