package io.fabricrpc.transport;

import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.api.RemoteAccess;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The counter slot's algorithm against the worst placement the SPI allows: every byte of a write lands on its own,
 * in random order, except that {@link Link#writePublishedInline}'s first byte lands after the rest (Soft-RoCE places
 * bytes in ascending order; a shuffle covers any order). Transports run the same check on their real links in
 * {@link TransportContractTest}.
 */
class CounterSlotTest {
    private static final VarHandle BYTE = ValueLayout.JAVA_BYTE.varHandle();
    private static final long STEP = 0x0000_0101_0101_0101L;

    @Test
    void aZeroedSlotReadsZeroAndPublicationsReadBack() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment memory = arena.allocate(64, 8);
            assertEquals(0, CounterSlot.read(memory, 8, 0));
            CounterSlot.Writer writer = new CounterSlot.Writer(memory, 8);
            for (long v = 1; v <= 600; v++) { // wraps the 1-byte sequence twice
                writer.publish(v * 3);
                assertEquals(v * 3, CounterSlot.read(memory, 8, 0));
            }
            assertEquals(1800, writer.value());
            IllegalArgumentException back = assertThrows(IllegalArgumentException.class, () -> writer.publish(5));
            assertTrue(back.getMessage().contains("1800") && back.getMessage().contains("5"), back.getMessage());
            assertThrows(IllegalArgumentException.class, () -> new CounterSlot.Writer(memory, 4));
        }
    }

    @Test
    void readsThroughAByteByByteLinkAreNeverTorn() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment memory = arena.allocate(64, 8);
            RemoteRegion region = new RemoteRegion(1, 1, memory.address(), memory.byteSize(), 0, RemoteAccess.WRITE);
            CounterSlot.Writer writer = new CounterSlot.Writer(new ByteByByteLink(memory), region, 16);
            int publications = 200_000;
            AtomicLong started = new AtomicLong();
            AtomicReference<String> error = new AtomicReference<>();
            Thread reader = Thread.ofPlatform().start(() -> {
                long known = 0;
                while (known < publications * STEP && error.get() == null) {
                    long value = CounterSlot.read(memory, 16, known);
                    long bound = started.get() * STEP;
                    if (value % STEP != 0 || value > bound || value < known) {
                        error.compareAndSet(null, "read 0x" + Long.toHexString(value) + " after 0x"
                                + Long.toHexString(known) + " with 0x" + Long.toHexString(bound) + " published");
                    }
                    known = value;
                }
            });
            for (long k = 1; k <= publications && error.get() == null; k++) {
                started.set(k);
                writer.publish(k * STEP);
            }
            reader.join(60_000);
            assertFalse(reader.isAlive(), "reader never saw the last publication");
            assertNull(error.get());
        }
    }

    /** The harness does tear: a plain 8-byte word written through it is seen half old, half new. */
    @Test
    void theHarnessTearsAPlainWord() throws Exception {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment memory = arena.allocate(64, 8);
            RemoteRegion region = new RemoteRegion(1, 1, memory.address(), memory.byteSize(), 0, RemoteAccess.WRITE);
            ByteByByteLink link = new ByteByByteLink(memory);
            MemorySegment image = MemorySegment.ofArray(new long[2]);
            AtomicBoolean torn = new AtomicBoolean();
            AtomicBoolean stop = new AtomicBoolean();
            Thread reader = Thread.ofPlatform().start(() -> {
                while (!stop.get()) {
                    if ((long) ValueLayout.JAVA_LONG.varHandle().getAcquire(memory, 8L) % STEP != 0) {
                        torn.set(true);
                        return;
                    }
                }
            });
            long deadline = System.nanoTime() + 20_000_000_000L;
            for (long k = 1; !torn.get() && System.nanoTime() < deadline; k++) {
                image.set(ValueLayout.JAVA_LONG, 8, k * STEP);
                link.writePublishedInline(image, 0, region, 0, 16); // the word rides behind a 1-byte flag
            }
            stop.set(true);
            reader.join();
            assertTrue(torn.get(), "no torn read in 20 s: the harness does not model byte-wise placement");
        }
    }

    /** Places every byte of a write as its own release store, in random order, the first byte last. */
    private static final class ByteByByteLink implements Link {
        private final MemorySegment peerMemory;
        private final SplittableRandom random = new SplittableRandom(42);
        private final int[] order = new int[MAX_INLINE_LENGTH];

        ByteByByteLink(MemorySegment peerMemory) {
            this.peerMemory = peerMemory;
        }

        @Override
        public long writePublishedInline(MemorySegment src, long srcOffset, RemoteRegion dst, long dstOffset, int length) {
            Link.checkInline(dst, dstOffset, length);
            for (int i = 0; i < length - 1; i++) {
                order[i] = i + 1;
            }
            for (int i = length - 2; i > 0; i--) {
                int j = random.nextInt(i + 1);
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
            for (int i = 0; i < length - 1; i++) {
                int at = order[i];
                BYTE.setRelease(peerMemory, dstOffset + at, src.get(ValueLayout.JAVA_BYTE, srcOffset + at));
                Thread.onSpinWait(); // widen the window between bytes, as a responder's copy loop does
            }
            BYTE.setRelease(peerMemory, dstOffset, src.get(ValueLayout.JAVA_BYTE, srcOffset));
            return 1;
        }

        @Override
        public long peerId() {
            return 1;
        }

        @Override
        public EndpointAddress peerAddress() {
            throw new UnsupportedOperationException();
        }

        @Override
        public long write(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length) {
            throw new UnsupportedOperationException();
        }

        @Override
        public long writeLong(RemoteRegion dst, long dstOffset, long value) {
            throw new UnsupportedOperationException();
        }

        @Override
        public long read(RemoteRegion src, long srcOffset, LocalRegion dst, long dstOffset, long length) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean send(int type, MemorySegment payload, long offset, int length) {
            throw new UnsupportedOperationException();
        }

        @Override
        public boolean isComplete(long ticket) {
            return true;
        }

        @Override
        public void awaitCompletion(long ticket) {
        }

        @Override
        public void checkAlive() {
        }

        @Override
        public void fence(String reason) {
        }

        @Override
        public boolean isAlive() {
            return true;
        }
    }
}
