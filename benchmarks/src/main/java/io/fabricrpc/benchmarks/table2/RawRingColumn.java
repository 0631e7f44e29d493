package io.fabricrpc.benchmarks.table2;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;

import java.util.concurrent.TimeUnit;

/**
 * The {@code raw} baseline (Seriema's {@code max-raw}): the same longs as the calls, moved through an Agrona
 * {@link OneToOneRingBuffer} in memory both processes map, with no serialization and no invocation. The sender
 * writes the longs straight into the claimed slot (no staging copy); the receiver sums each message's longs into
 * {@link Payloads.Sink}, the same work the calls' bodies do. Reads at most {@value #READ_LIMIT} messages per poll,
 * as the fabric's receiver takes at most 64 records per sender per poll.
 */
final class RawRingColumn implements Column {
    static final int MESSAGE_TYPE = 1;
    static final int READ_LIMIT = 64;

    private final OneToOneRingBuffer ring;
    private final UnsafeBuffer buffer;
    private final IdleStrategy idle = newIdleStrategy();
    private final long fullTimeoutNanos;
    private final MessageHandler handler = RawRingColumn::onMessage;

    /** @param ringRegion the ring region of the shared file (capacity + trailer), zero-filled before first use */
    RawRingColumn(UnsafeBuffer ringRegion, long fullTimeoutMillis) {
        this.ring = new OneToOneRingBuffer(ringRegion);
        this.buffer = ringRegion;
        this.fullTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(fullTimeoutMillis);
    }

    /** The idle strategy of the fabric's messengers while their chunks are full, so both wait alike. */
    static IdleStrategy newIdleStrategy() {
        return new BackoffIdleStrategy(64, 16, 1_000, 100_000);
    }

    @Override
    public String name() {
        return "raw";
    }

    @Override
    public long sendUntil(int payloadBytes, long first, long deadlineNanos) {
        int longs = Payloads.checkedLongs(payloadBytes);
        long i = first;
        do {
            for (int b = 0; b < FabricColumn.BATCH; b++, i++) {
                int index = claim(payloadBytes, i);
                for (int j = 0; j < longs; j++) {
                    buffer.putLong(index + j * Long.BYTES, i + j);
                }
                ring.commit(index); // Agrona: release store of the record length publishes the longs
            }
        } while (System.nanoTime() - deadlineNanos < 0);
        return i - first;
    }

    private int claim(int length, long i) {
        int index = ring.tryClaim(MESSAGE_TYPE, length);
        if (index > 0) {
            return index;
        }
        long start = System.nanoTime();
        idle.reset();
        while ((index = ring.tryClaim(MESSAGE_TYPE, length)) <= 0) {
            if (System.nanoTime() - start > fullTimeoutNanos) {
                throw new IllegalStateException("raw: the receiver consumed nothing for "
                        + TimeUnit.NANOSECONDS.toMillis(fullTimeoutNanos) + " ms; message " + i + " of " + length
                        + " bytes does not fit the ring (capacity " + ring.capacity() + ", " + ring.size() + " used)");
            }
            idle.idle();
        }
        return index;
    }

    @Override
    public void flush() {
        // every message is in the ring once tryClaim/commit returned
    }

    @Override
    public int poll() {
        return ring.read(handler, READ_LIMIT);
    }

    private static void onMessage(int type, DirectBuffer message, int index, int length) {
        Payloads.takeLongs(message, index, length);
    }

    @Override
    public String toString() {
        return "raw (Agrona OneToOneRingBuffer, capacity " + ring.capacity() + ")";
    }
}
