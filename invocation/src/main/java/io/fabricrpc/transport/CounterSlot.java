package io.fabricrpc.transport;

import io.fabricrpc.api.RemoteRegion;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * A monotonic 64-bit counter one endpoint publishes into another's memory, readable without ever seeing a torn
 * value although the transport only guarantees single-byte atomicity (an RDMA responder may place an 8-byte WRITE
 * byte by byte; Soft-RoCE does). Used for consumption pushed back to a sender: consumed chunks and records of a
 * messenger, and broadcast acknowledgements.
 *
 * <pre>
 *  0     1                    8                        16                       24
 *  +-----+--------------------+------------------------+------------------------+
 *  | seq | zero               | value when seq is even | value when seq is odd  |
 *  +-----+--------------------+------------------------+------------------------+
 *  seq: publications so far, mod 256 (one byte, so it cannot tear); all zero = value 0
 * </pre>
 *
 * <p><b>Invariant.</b> The value slot named by the current {@code seq} is never written while {@code seq} names it:
 * publication {@code n} writes slot {@code n & 1} and then, as a later single-byte write, {@code seq = n}
 * ({@link Link#writePublishedInline}: the first byte lands last). The next write to that slot belongs to publication
 * {@code n + 2}, which starts only after {@code seq = n + 1} has landed. So a reader that loads {@code seq}, the slot
 * it names, then {@code seq} again (acquire, in that order) and sees the same {@code seq} twice has read a value that
 * was whole, unless {@code seq} wrapped through 256 publications between its loads. It therefore also rejects a read
 * that took longer than {@link #STALL_LIMIT_NANOS}: each publication follows the handling of a record and a link
 * write, so 256 of them cannot fit. A rejected read keeps the last sound value: the counter only lags, never leads.
 *
 * <p>One writer per slot ({@link Writer}); any number of readers ({@link #read}).
 */
public final class CounterSlot {
    public static final int LENGTH = 24;
    public static final int ALIGNMENT = 8;
    static final int SEQ_OFFSET = 0;
    static final int EVEN_VALUE_OFFSET = 8;
    static final int ODD_VALUE_OFFSET = 16;
    /** A read that took longer may have spanned 256 publications: a wrapped {@code seq} could look unchanged. */
    public static final long STALL_LIMIT_NANOS = 20_000;
    private static final int READ_ATTEMPTS = 4;

    private static final VarHandle SEQ = ValueLayout.JAVA_BYTE.varHandle();
    private static final VarHandle VALUE = ValueLayout.JAVA_LONG.varHandle();

    private CounterSlot() {
    }

    static long valueOffset(int seq) {
        return (seq & 1) == 0 ? EVEN_VALUE_OFFSET : ODD_VALUE_OFFSET;
    }

    /**
     * The counter in the slot at {@code offset} of {@code memory}, or {@code known} (the caller's last result, 0 at
     * first) when no sound value could be read right now. Never returns less than {@code known}; allocation-free.
     */
    public static long read(MemorySegment memory, long offset, long known) {
        for (int attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
            long started = System.nanoTime();
            byte seq = (byte) SEQ.getAcquire(memory, offset + SEQ_OFFSET);
            // acquire: the slot is loaded after seq, and the second load of seq after the slot
            long value = (long) VALUE.getAcquire(memory, offset + valueOffset(seq));
            byte again = (byte) SEQ.getAcquire(memory, offset + SEQ_OFFSET);
            if (seq == again && System.nanoTime() - started < STALL_LIMIT_NANOS) {
                return Math.max(known, value);
            }
        }
        return known;
    }

    /** Checks that a slot at {@code offset} is aligned as the layout needs. */
    public static void checkPlacement(long offset) {
        if ((offset & (ALIGNMENT - 1)) != 0) {
            throw new IllegalArgumentException("a counter slot needs an " + ALIGNMENT + "-byte-aligned offset, got "
                    + offset);
        }
    }

    /**
     * The single writer of one slot, in a peer's memory (through a link) or in local memory. Keeps the slot's image so
     * that a publication rewrites the other value slot with the bytes it already holds. Not thread-safe.
     */
    public static final class Writer {
        private final Link link;
        private final RemoteRegion remote;
        private final MemorySegment local;
        private final long offset;
        // Native like every source the links copy from: a heap one would make their shared accesses polymorphic.
        private final MemorySegment image = java.lang.foreign.Arena.ofAuto().allocate(LENGTH, ALIGNMENT);
        private int seq;
        private long value;

        /** Publishes into {@code region} at {@code offset} through {@code link}. */
        public Writer(Link link, RemoteRegion region, long offset) {
            checkPlacement(offset);
            region.checkRange("counter slot", offset, LENGTH);
            this.link = link;
            this.remote = region;
            this.local = null;
            this.offset = offset;
        }

        /** Publishes into this process's own {@code memory} at {@code offset}. */
        public Writer(MemorySegment memory, long offset) {
            checkPlacement(offset);
            this.link = null;
            this.remote = null;
            this.local = memory.asSlice(offset, LENGTH);
            this.offset = 0;
        }

        /** The latest value published. */
        public long value() {
            return value;
        }

        /**
         * Publishes {@code next} (at least the previous value), ordered after every earlier write of this thread.
         *
         * @return the link's ticket of the write (0 for local memory)
         */
        public long publish(long next) {
            if (next < value) {
                throw new IllegalArgumentException("counter went back from " + value + " to " + next);
            }
            value = next;
            seq = (seq + 1) & 0xFF;
            long slot = valueOffset(seq);
            image.set(ValueLayout.JAVA_LONG_UNALIGNED, slot, next);
            image.set(ValueLayout.JAVA_BYTE, SEQ_OFFSET, (byte) seq);
            int length = (int) slot + Long.BYTES; // an odd slot's write also covers the even one, unchanged
            if (link != null) {
                return link.writePublishedInline(image, 0, remote, offset, length);
            }
            VarHandle.releaseFence(); // earlier stores of this thread before the slot
            MemorySegment.copy(image, 1, local, 1, length - 1);
            SEQ.setRelease(local, (long) SEQ_OFFSET, (byte) seq); // release: seq after the slot
            return 0;
        }
    }
}
