package io.fabricrpc.benchmarks.checksum;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.zip.CRC32C;

/**
 * What a CRC32C (java.util.zip.CRC32C, the JIT's intrinsic) costs per checksummed unit on this machine: one record of
 * 8, 64 or 256 payload bytes (a checksum per record), or one 4 KiB batch (a checksum per chunk write), each against a
 * copy of the same bytes (what a send costs at least). Units are checksummed in place in a direct buffer walked as a
 * chunk would be; rounds interleave the sizes and the median round is reported, in ns per unit and per call.
 */
@Command(name = "checksum-cost", mixinStandardHelpOptions = true,
        description = "CRC32C per record and per 4 KiB batch, against copying the same bytes.")
public final class ChecksumCostBenchmark implements Callable<Integer> {
    private static final int CHUNK = 4096;

    @Option(names = "--rounds", defaultValue = "9", description = "Rounds (default ${DEFAULT-VALUE}).")
    int rounds;
    @Option(names = "--millis", defaultValue = "200", description = "Milliseconds per size per round (default ${DEFAULT-VALUE}).")
    long millis;
    @Option(names = "--sizes", split = ",", defaultValue = "8,64,256,4096",
            description = "Bytes per checksummed unit (default ${DEFAULT-VALUE}).")
    List<Integer> sizes;
    @Option(names = "--output", required = true, description = "Markdown report to write.")
    Path output;
    @Option(names = "--note", defaultValue = "", description = "A line for the report's notes.")
    String note;

    private final ByteBuffer chunk = ByteBuffer.allocateDirect(64 * CHUNK);
    private final ByteBuffer copy = ByteBuffer.allocateDirect(64 * CHUNK);
    private final CRC32C crc = new CRC32C();
    private long blackhole;

    public static void main(String[] args) {
        System.exit(new CommandLine(new ChecksumCostBenchmark()).execute(args));
    }

    /** ns per unit of {@code size} bytes, checksummed (or copied) one after another through 64 chunks of memory. */
    private double measure(int size, boolean checksum, long nanos) {
        int record = (size + 4 + 3) & -4; // the unit as it sits in a chunk: a 4-byte header, 4-byte aligned
        int limit = chunk.capacity() - record;
        long units = 0;
        long start = System.nanoTime();
        long end = start + nanos;
        int at = 0;
        long now;
        do {
            for (int i = 0; i < 256; i++) {
                ByteBuffer source = chunk.limit(at + size).position(at);
                if (checksum) {
                    crc.reset();
                    crc.update(source);
                    blackhole += crc.getValue();
                } else {
                    copy.clear().position(at);
                    copy.put(source);
                    blackhole += copy.get(at);
                }
                at += record;
                if (at > limit) {
                    at = 0;
                }
            }
            units += 256;
            now = System.nanoTime();
        } while (now < end);
        chunk.clear();
        return (double) (now - start) / units;
    }

    @Override
    public Integer call() throws Exception {
        for (int i = 0; i < chunk.capacity(); i++) {
            chunk.put(i, (byte) (i * 31 + 7));
        }
        for (int size : sizes) { // warm-up: both paths compiled before any round counts
            measure(size, true, 300_000_000L);
            measure(size, false, 300_000_000L);
        }
        double[][] crcNs = new double[sizes.size()][rounds];
        double[][] copyNs = new double[sizes.size()][rounds];
        for (int r = 0; r < rounds; r++) {
            for (int k = 0; k < sizes.size(); k++) {
                int s = (k + r) % sizes.size(); // rotate the first size
                crcNs[s][r] = measure(sizes.get(s), true, millis * 1_000_000L);
                copyNs[s][r] = measure(sizes.get(s), false, millis * 1_000_000L);
            }
        }
        List<String> lines = new ArrayList<>();
        lines.add("# CRC32C cost per checksummed unit");
        lines.add("");
        lines.add("`benchmarks/run-checksum-bench.sh` (io.fabricrpc.benchmarks.checksum.ChecksumCostBenchmark): "
                + rounds + " rounds x " + millis + " ms per size, medians; JDK " + Runtime.version() + ", "
                + Runtime.getRuntime().availableProcessors() + " CPUs. " + note);
        lines.add("");
        lines.add("| unit (bytes) | CRC32C ns/unit | copy ns/unit | CRC32C / copy | CRC32C ns per 8-byte call |");
        lines.add("|---:|---:|---:|---:|---:|");
        for (int k = 0; k < sizes.size(); k++) {
            int size = sizes.get(k);
            double c = median(crcNs[k]);
            double m = median(copyNs[k]);
            // A 4 KiB batch holds (4096 - 68) / 12 calls of 8 bytes (4-byte header each); a record holds one.
            double perCall = size >= CHUNK ? c / ((CHUNK - 68) / 12) : c;
            lines.add(String.format(Locale.ROOT, "| %d | %.1f | %.1f | %.2f | %s |", size, c, m, c / m,
                    size == 8 || size >= CHUNK ? String.format(Locale.ROOT, "%.2f", perCall) : "-"));
        }
        lines.add("");
        lines.add("(blackhole " + (blackhole & 1) + ")");
        Files.write(output, lines);
        lines.forEach(System.out::println);
        return 0;
    }

    private static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2];
    }
}
