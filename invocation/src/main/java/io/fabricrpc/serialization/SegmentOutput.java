package io.fabricrpc.serialization;

import com.esotericsoftware.kryo.io.ByteBufferOutput;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Kryo output writing straight into a window {@code [start, limit)} of a segment, never past {@code limit}
 * (Kryo then throws {@code KryoBufferOverflowException}) and never growing. The segment's {@link ByteBuffer} view
 * is created once per segment instance, so passing the same segment (a whole chunk, with offsets) allocates nothing.
 */
final class SegmentOutput extends ByteBufferOutput {
    private final SegmentWindow window = new SegmentWindow();

    /** Positions this output at {@code start}; bytes at and after {@code limit} are never written. */
    void bind(MemorySegment segment, long start, long limit) {
        ByteBuffer buffer = window.bind(segment, start, limit);
        setBuffer(buffer, window.relativeLimit());
        capacity = window.relativeLimit(); // the window ends at limit, not at the buffer's capacity
    }

    /** Current write position as an offset in the bound segment. */
    long segmentPosition() {
        return window.base() + position;
    }

    /** The ByteBuffer view of a segment, cached per segment instance, positioned and limited to a window. */
    static final class SegmentWindow {
        private MemorySegment segment;
        private ByteBuffer buffer;
        private long base;
        private int relativeLimit;

        ByteBuffer bind(MemorySegment target, long start, long limit) {
            if (target.byteSize() <= Integer.MAX_VALUE) {
                if (target != segment) {
                    segment = target;
                    buffer = target.asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
                }
                base = 0;
            } else {
                // Segments over 2 GiB have no ByteBuffer view: take one of the window (allocates per call).
                if (limit - start > Integer.MAX_VALUE) {
                    limit = start + Integer.MAX_VALUE;
                }
                segment = null;
                buffer = target.asSlice(start, limit - start).asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
                base = start;
            }
            relativeLimit = (int) (limit - base);
            buffer.clear();
            buffer.limit(relativeLimit);
            buffer.position((int) (start - base));
            return buffer;
        }

        long base() {
            return base;
        }

        int relativeLimit() {
            return relativeLimit;
        }
    }
}
