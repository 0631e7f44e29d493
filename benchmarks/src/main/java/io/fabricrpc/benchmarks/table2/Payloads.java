package io.fabricrpc.benchmarks.table2;

import io.fabricrpc.api.RemoteRunnable;
import io.fabricrpc.api.SerializationRegistry;

/**
 * The calls of Table 2: lambdas capturing 1, 8 or 32 longs (8, 64 or 256 bytes of captured values; primitives,
 * so the codec writes them raw and nothing but the lambda object is allocated per call at the sender). Call
 * {@code i} captures {@code i, i+1, ..., i+k-1}; its body, run on the receiver, adds their sum to {@link Sink}
 * (Seriema's "empty function, not elided": the captured values are used, the work is a few adds).
 */
public final class Payloads {
    /** Payload sizes a run can measure. */
    public static final int[] SIZES = {8, 64, 256};

    private Payloads() {
    }

    /** Receiver-side state of the calls; touched only by the receiving thread of rank 1. */
    public static final class Sink {
        static long count;
        static long sum;

        private Sink() {
        }

        static void take(long value) {
            count++;
            sum += value;
        }

        static void reset() {
            count = 0;
            sum = 0;
        }
    }

    /** The registry both ranks build: no classes, only this class's lambdas. */
    public static SerializationRegistry registry() {
        return SerializationRegistry.builder().allowCapturingClass(Payloads.class).build();
    }

    public static boolean isSupported(int payloadBytes) {
        return payloadBytes == 8 || payloadBytes == 64 || payloadBytes == 256;
    }

    /** {@link #longs}, after checking the size is one of Table 2's (IllegalArgumentException otherwise). */
    public static int checkedLongs(int payloadBytes) {
        if (!isSupported(payloadBytes)) {
            throw new IllegalArgumentException("payload must be 8, 64 or 256 bytes, got " + payloadBytes);
        }
        return longs(payloadBytes);
    }

    /** What a baseline's receiver does per message: sums its longs into {@link Sink}, as the calls' bodies do. */
    public static void takeLongs(org.agrona.DirectBuffer message, int offset, int length) {
        long sum = 0;
        for (int at = 0; at < length; at += Long.BYTES) {
            sum += message.getLong(offset + at);
        }
        Sink.take(sum);
    }

    /** Number of longs a call of {@code payloadBytes} carries. */
    public static int longs(int payloadBytes) {
        return payloadBytes / Long.BYTES;
    }

    /** Call {@code i} of the given size. */
    public static RemoteRunnable call(int payloadBytes, long i) {
        return switch (payloadBytes) {
            case 8 -> capture1(i);
            case 64 -> capture8(i);
            case 256 -> capture32(i);
            default -> throw new IllegalArgumentException("payload must be 8, 64 or 256 bytes, got " + payloadBytes);
        };
    }

    static RemoteRunnable capture1(long i) {
        return () -> Sink.take(i);
    }

    static RemoteRunnable capture8(long i) {
        long a0 = i, a1 = i + 1, a2 = i + 2, a3 = i + 3, a4 = i + 4, a5 = i + 5, a6 = i + 6, a7 = i + 7;
        return () -> Sink.take(a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7);
    }

    static RemoteRunnable capture32(long i) {
        long a0 = i, a1 = i + 1, a2 = i + 2, a3 = i + 3, a4 = i + 4, a5 = i + 5, a6 = i + 6, a7 = i + 7;
        long b0 = i + 8, b1 = i + 9, b2 = i + 10, b3 = i + 11, b4 = i + 12, b5 = i + 13, b6 = i + 14, b7 = i + 15;
        long c0 = i + 16, c1 = i + 17, c2 = i + 18, c3 = i + 19, c4 = i + 20, c5 = i + 21, c6 = i + 22, c7 = i + 23;
        long d0 = i + 24, d1 = i + 25, d2 = i + 26, d3 = i + 27, d4 = i + 28, d5 = i + 29, d6 = i + 30, d7 = i + 31;
        return () -> Sink.take(a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + b0 + b1 + b2 + b3 + b4 + b5 + b6 + b7
                + c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7 + d0 + d1 + d2 + d3 + d4 + d5 + d6 + d7);
    }

    /**
     * What {@link Sink#sum} must hold after calls {@code first .. first+n-1} of {@code payloadBytes}: call i adds
     * {@code k·i + k(k-1)/2}. Arithmetic wraps modulo 2<sup>64</sup>, as the receiver's additions do.
     */
    public static long expectedSum(int payloadBytes, long first, long n) {
        long k = longs(payloadBytes);
        long sumOfI = n * first + triangle(n - 1); // first + (first+1) + ... + (first+n-1)
        return k * sumOfI + n * triangle(k - 1);
    }

    /** Sum of {@code n} runs of call {@code first} alone (the same call object sent {@code n} times). */
    public static long expectedSumOfRepeats(int payloadBytes, long first, long n) {
        return n * expectedSum(payloadBytes, first, 1);
    }

    /** 0 + 1 + ... + m, exact modulo 2^64 (halve the even factor before multiplying). */
    private static long triangle(long m) {
        return (m & 1) == 0 ? (m / 2) * (m + 1) : m * ((m + 1) / 2);
    }
}
