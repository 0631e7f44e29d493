package io.fabricrpc.benchmarks;

import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;

import java.nio.ByteBuffer;

/**
 * The baseline: ping-pong over two Agrona {@link OneToOneRingBuffer}s laid out by {@link PingPongRingsDescriptor}
 * in one region (plain off-heap memory between threads, a mapped file between processes). Agrona publishes each
 * record with a release store of its length and reads it with an acquire load, so no extra fences are needed here.
 */
final class AgronaPingPong {
    private AgronaPingPong() {
    }

    static OneToOneRingBuffer requestRing(AtomicBuffer region, int capacity) {
        return new OneToOneRingBuffer(new UnsafeBuffer(region, PingPongRingsDescriptor.REQUEST_RING_OFFSET,
                PingPongRingsDescriptor.ringLength(capacity)));
    }

    static OneToOneRingBuffer replyRing(AtomicBuffer region, int capacity) {
        return new OneToOneRingBuffer(new UnsafeBuffer(region, PingPongRingsDescriptor.replyRingOffset(capacity),
                PingPongRingsDescriptor.ringLength(capacity)));
    }

    /** The calling side: writes a ping into the request ring and polls the reply ring for the pong. */
    static final class Client implements PingPongClient {
        private final OneToOneRingBuffer requests;
        private final OneToOneRingBuffer replies;
        private final UnsafeBuffer ping;
        private final UnsafeBuffer pong;
        private final int payload;
        private final IdleStrategy idle;
        private final long timeoutNanos;
        private final MessageHandler onPong = this::onPong;
        private int pongLength;

        Client(AtomicBuffer region, int capacity, int payload, IdleStrategy idle, long timeoutNanos) {
            this.requests = requestRing(region, capacity);
            this.replies = replyRing(region, capacity);
            if (payload > requests.maxMsgLength()) {
                throw new IllegalArgumentException("payload of " + payload + " bytes exceeds the ring's limit of "
                        + requests.maxMsgLength());
            }
            this.ping = new UnsafeBuffer(ByteBuffer.allocateDirect(Math.max(payload, 8)));
            this.pong = new UnsafeBuffer(ByteBuffer.allocateDirect(Math.max(payload, 8)));
            this.payload = payload;
            this.idle = idle;
            this.timeoutNanos = timeoutNanos;
        }

        @Override
        public void call(long sequence) {
            if (payload >= 8) {
                ping.putLong(0, sequence);
            }
            if (!requests.write(PingPongRingsDescriptor.MESSAGE_TYPE, ping, 0, payload)) {
                // One message in flight never fills a 64 KiB ring: the echo side is not consuming.
                throw new IllegalStateException("request ring full at call " + sequence + " (capacity "
                        + requests.capacity() + " bytes): the echo side stopped reading");
            }
            pongLength = -1;
            idle.reset();
            long start = 0;
            int polls = 0;
            while (replies.read(onPong, 1) == 0) {
                idle.idle();
                if ((++polls & 1023) == 0) {
                    long now = System.nanoTime();
                    if (start == 0) {
                        start = now;
                    } else if (now - start > timeoutNanos) {
                        throw new IllegalStateException("no pong for call " + sequence + " within "
                                + timeoutNanos / 1_000_000 + " ms: the echo side is gone or stalled");
                    }
                }
            }
            Echoes.check("agrona", sequence, payload, pongLength, payload >= 8 ? pong.getLong(0) : sequence);
        }

        private void onPong(int type, MutableDirectBuffer buffer, int index, int length) {
            buffer.getBytes(index, pong, 0, Math.min(length, pong.capacity()));
            pongLength = length;
        }

        @Override
        public void close() {
            // the region belongs to whoever mapped or allocated it
        }
    }

    /** The echoing side: copies each ping from the request ring straight into the reply ring. */
    static final class Echo implements EchoService {
        private final OneToOneRingBuffer requests;
        private final OneToOneRingBuffer replies;
        private final MessageHandler onPing = this::onPing;

        Echo(AtomicBuffer region, int capacity) {
            this.requests = requestRing(region, capacity);
            this.replies = replyRing(region, capacity);
        }

        @Override
        public int poll() {
            return requests.read(onPing, 1);
        }

        private void onPing(int type, MutableDirectBuffer buffer, int index, int length) {
            if (!replies.write(type, buffer, index, length)) {
                throw new IllegalStateException("reply ring full (capacity " + replies.capacity()
                        + " bytes): the client stopped reading");
            }
        }
    }
}
