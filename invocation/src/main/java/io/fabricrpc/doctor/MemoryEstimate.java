package io.fabricrpc.doctor;

import io.fabricrpc.api.MessengerConfig;

import java.util.Locale;

/**
 * Rough per-process messenger memory of a job, used as the threshold of the space and memlock checks: every local
 * thread receives from every worker of the job ({@code c} chunks at first use, up to {@code cMax}) and stages one
 * chunk per destination. A lower bound of what a process maps (shm) or registers (RDMA): allocations come on top.
 */
public record MemoryEstimate(long initialBytes, long maximumBytes, String shape) {

    public static MemoryEstimate of(int processes, int threads, MessengerConfig messenger) {
        long pairs = (long) threads * processes * threads;
        long chunk = messenger.chunkSize();
        return new MemoryEstimate(pairs * (messenger.c() + 1L) * chunk, pairs * (messenger.cMax() + 1L) * chunk,
                processes + " processes x " + threads + " threads, " + bytes(chunk) + " chunks, c=" + messenger.c()
                        + ", cMax=" + messenger.cMax());
    }

    /** {@code n} as B, KiB, MiB, GiB or TiB with at most one decimal. */
    public static String bytes(long n) {
        if (n < 0) {
            return "unlimited";
        }
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        double value = n;
        int unit = 0;
        while (value >= 1024 && unit < units.length - 1) {
            value /= 1024;
            unit++;
        }
        return unit == 0 || value == Math.floor(value)
                ? String.format(Locale.ROOT, "%d %s", (long) value, units[unit])
                : String.format(Locale.ROOT, "%.1f %s", value, units[unit]);
    }
}
