package io.fabricrpc.transport.rdma.verbs;

import static io.fabricrpc.transport.rdma.RdmaTestSupport.patternByte;

import java.nio.ByteBuffer;

/** Fills and checks buffers byte for byte. */
public final class VerbsTestData {
    private VerbsTestData() {
    }

    public static void fill(ByteBuffer buffer, int offset, int length, int seed) {
        for (int i = 0; i < length; i++) {
            buffer.put(offset + i, patternByte(seed, i));
        }
    }

    /** @throws AssertionError naming the first differing byte */
    public static void assertPattern(ByteBuffer buffer, int offset, int length, int seed) {
        for (int i = 0; i < length; i++) {
            if (buffer.get(offset + i) != patternByte(seed, i)) {
                throw new AssertionError("byte " + i + " of " + length + " differs: expected " + patternByte(seed, i)
                        + " got " + buffer.get(offset + i));
            }
        }
    }
}
