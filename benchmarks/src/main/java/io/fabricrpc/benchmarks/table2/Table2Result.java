package io.fabricrpc.benchmarks.table2;

import java.util.Locale;

/**
 * One measurement: {@code calls} calls of {@code payloadBytes} sent by one column in round {@code round}
 * ({@code position} = its place in that round's order for this size), timed from the first send until the
 * receiver had run them all, and the bytes allocated meanwhile by the sending thread, the receiving thread, and
 * the other threads of each process (service, flusher, liveness...), and the CPU time of the sending and the
 * receiving thread (the receiver's includes its polling while idle).
 */
public record Table2Result(int round, String column, int payloadBytes, int position, long calls, long nanos,
                           long senderBytes, long receiverBytes, long senderOtherBytes, long receiverOtherBytes,
                           long senderCpuNanos, long receiverCpuNanos) {

    public double callsPerSecond() {
        return calls * 1e9 / nanos;
    }

    /** Payload megabytes (10^6 bytes) per second, as Seriema's Table 2. */
    public double megabytesPerSecond() {
        return callsPerSecond() * payloadBytes / 1e6;
    }

    /** Parses the fields after {@link Table2Rank#RESULT} in a rank's output line. */
    static Table2Result parse(String line) {
        String[] f = line.substring(Table2Rank.RESULT.length()).trim().split("\\s+");
        if (f.length != 12) {
            throw new IllegalArgumentException("malformed result line '" + line + "'");
        }
        return new Table2Result(Integer.parseInt(f[0]), f[1], Integer.parseInt(f[2]), Integer.parseInt(f[3]),
                Long.parseLong(f[4]), Long.parseLong(f[5]), Long.parseLong(f[6]), Long.parseLong(f[7]),
                Long.parseLong(f[8]), Long.parseLong(f[9]), Long.parseLong(f[10]), Long.parseLong(f[11]));
    }

    /** The line {@link #parse} reads: {@link Table2Rank#RESULT} and every field. */
    String line() {
        return String.format(Locale.ROOT, "%s %d %s %d %d %d %d %d %d %d %d %d %d", Table2Rank.RESULT, round, column,
                payloadBytes, position, calls, nanos, senderBytes, receiverBytes, senderOtherBytes, receiverOtherBytes,
                senderCpuNanos, receiverCpuNanos);
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "%s %d B round %d: %,d calls in %.3f s (%,.0f calls/s)", column, payloadBytes,
                round, calls, nanos / 1e9, callsPerSecond());
    }
}
