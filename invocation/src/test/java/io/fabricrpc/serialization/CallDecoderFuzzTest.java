package io.fabricrpc.serialization;

import io.fabricrpc.api.SerializationRegistry;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.fabricrpc.api.RemoteBufferConsumer;
import io.fabricrpc.api.RemoteContextConsumer;
import io.fabricrpc.api.RemoteRunnable;
import io.fabricrpc.api.RemoteSupplier;
import io.fabricrpc.fuzz.ClassVersionShim;
import io.fabricrpc.fuzz.FuzzSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.Serializable;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Fuzzes {@link CallDecoder#invoke} with call records another process wrote: a chunk's worth of records, decoded one
 * after the other as the receiver does. Documented outcomes: a decoded call, or a {@link CallDecodingException}
 * (its subclasses included); after one with a known {@code recordEnd()} decoding goes on there, which must be past
 * the failed record. The functions it may reach are this class's lambdas, which never throw (object captures may
 * legitimately arrive null: a sender may capture null).
 */
@ExtendWith(ClassVersionShim.class)
class CallDecoderFuzzTest {
    private static final List<Class<? extends Throwable>> DOCUMENTED = List.of(CallDecodingException.class);
    static final int SEGMENT_BYTES = 4096;

    /** Captured by value in the object-capture seeds. */
    record Point(int x, long y, String label) {
    }

    static final SerializationRegistry REGISTRY = SerializationRegistry.builder()
            .register(Point.class).register(int[].class).register(String[].class)
            .allowCapturingClass(CallDecoderFuzzTest.class).build();
    private static final Arena ARENA = Arena.ofShared();
    private static final MemorySegment SEGMENT = ARENA.allocate(SEGMENT_BYTES, 8);
    private static final MemorySegment BUFFER = ARENA.allocate(64, 8);
    private static final CallDecoder DECODER = new CallDecoder(REGISTRY, "fuzz", new StringBuilder());
    static long sink;

    @FuzzTest(maxDuration = FuzzSupport.MAX_DURATION)
    @Timeout(FuzzSupport.TIMEOUT_SECONDS)
    void records(byte[] input) {
        int length = Math.min(input.length, SEGMENT_BYTES);
        SEGMENT.fill((byte) 0);
        MemorySegment.copy(MemorySegment.ofArray(input), 0, SEGMENT, 0, length);
        DECODER.reset(); // every input starts on a fresh link: no definitions from an earlier input
        long offset = 0;
        while (offset < length) {
            long next;
            try {
                next = DECODER.invoke(SEGMENT, offset, length, BUFFER);
            } catch (CallDecodingException e) {
                if (e.recordEnd() < 0) {
                    return; // the rest of the chunk cannot be delimited
                }
                next = e.recordEnd();
            } catch (Throwable e) {
                FuzzSupport.expectDocumented(e, DOCUMENTED, input.length);
                return;
            }
            if (next <= offset || next > length) {
                throw new AssertionError("record at " + offset + " ends at " + next + ", limit " + length);
            }
            offset = next;
        }
    }

    // ------------------------------------------------------------------------ what the records may call

    static RemoteRunnable ints(int a, long b) {
        return () -> sink += a + b;
    }

    static RemoteRunnable mixed(byte a, char b, double c, boolean d) {
        return () -> sink += a + b + (long) c + (d ? 1 : 0);
    }

    static RemoteRunnable text(String s, int n) {
        return () -> sink += Objects.hashCode(s) + n;
    }

    static RemoteRunnable point(Point p, int[] values) {
        return () -> sink += Objects.hashCode(p) + Arrays.hashCode(values);
    }

    static RemoteSupplier<Long> supplier(long v) {
        return () -> v * 2;
    }

    static RemoteBufferConsumer buffer(int n) {
        return b -> sink += (b == null ? 0 : b.byteSize()) + n;
    }

    static RemoteContextConsumer<StringBuilder> context(String s) {
        return c -> sink += c.length() + Objects.hashCode(s);
    }

    /** Valid records from the real encoder: each seed a few calls, definitions first, as a link carries them. */
    @Test
    @EnabledIfSystemProperty(named = FuzzSupport.WRITE_SEEDS, matches = ".+")
    void writeSeeds() {
        Path dir = FuzzSupport.seedDirectory().resolve("io/fabricrpc/serialization/CallDecoderFuzzTestInputs/records");
        List<List<Serializable>> seeds = List.of(
                List.of(ints(1, 2), ints(3, 4)),
                List.of(mixed((byte) 1, 'x', 2.5, true), supplier(7)),
                List.of(text("hello", 3), text("", 0)),
                List.of(point(new Point(1, 2, "p"), new int[] {1, 2, 3})),
                List.of(buffer(5), context("c"), ints(9, 9)));
        int n = 0;
        for (List<Serializable> calls : seeds) {
            CallEncoder encoder = new CallEncoder(REGISTRY, "fuzz");
            MemorySegment out = Arena.ofAuto().allocate(SEGMENT_BYTES, 8);
            long at = 0;
            for (Serializable call : calls) {
                int written = encoder.encode(call, out, at, SEGMENT_BYTES);
                if (written <= 0) {
                    throw new IllegalStateException("seed call does not fit: " + written);
                }
                at += written;
            }
            FuzzSupport.writeSeed(dir, "seed-" + n++, out.asSlice(0, at).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
        }
    }
}
