package io.fabricrpc.benchmarks;

import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

/**
 * Layout of the baseline's shared region: two Agrona {@code OneToOneRingBuffer}s back to back, each a ring of
 * {@code capacity} bytes followed by Agrona's trailer (head, tail and correlation counters). Used by both ends
 * (the client and the echo side, threads of one JVM or two processes mapping the same file).
 *
 * <pre>
 *  0                              C + T                           2(C + T)
 *  +------------------------------+-------------------------------+
 *  | request ring: data | trailer | reply ring: data | trailer    |
 *  +------------------------------+-------------------------------+
 *  C: ring capacity (a power of two), T: RingBufferDescriptor.TRAILER_LENGTH
 *  request ring: written by the client, read by the echo side; reply ring: the reverse.
 * </pre>
 *
 * A zero-filled region is two empty rings, so a fresh file needs no initialisation.
 */
public final class PingPongRingsDescriptor {
    /** Message type of every ping and pong (Agrona requires a positive type). */
    public static final int MESSAGE_TYPE = 1;
    public static final int DEFAULT_CAPACITY = 64 * 1024;
    public static final int REQUEST_RING_OFFSET = 0;

    private PingPongRingsDescriptor() {
    }

    /** Length of one ring including its trailer. */
    public static int ringLength(int capacity) {
        if (Integer.bitCount(capacity) != 1 || capacity < 1024) {
            throw new IllegalArgumentException("ring capacity must be a power of two >= 1024, got " + capacity);
        }
        return capacity + RingBufferDescriptor.TRAILER_LENGTH;
    }

    public static int replyRingOffset(int capacity) {
        return ringLength(capacity);
    }

    public static int regionLength(int capacity) {
        return 2 * ringLength(capacity);
    }
}
