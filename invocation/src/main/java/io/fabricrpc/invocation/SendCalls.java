package io.fabricrpc.invocation;

import io.fabricrpc.api.ThreadId;
import io.fabricrpc.api.MessagingException;
import io.fabricrpc.messaging.MessagingNode;
import io.fabricrpc.serialization.CallEncoder;
import io.fabricrpc.api.SerializationRegistry;
import io.fabricrpc.transport.Link;
import io.fabricrpc.transport.Transport;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import java.io.Serializable;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * Seriema's send-based calls: one two-sided transport message per call ({@link SendCallDescriptor}), no buffers
 * negotiated. The service thread moves each arriving call into its worker's queue, an Agrona one-to-one ring whose
 * only producer is the service thread and only consumer the worker's thread; the worker runs them in
 * {@code processCalls}.
 */
final class SendCalls {
    /** Each worker's queue: fixed, whatever the number of senders. */
    static final int QUEUE_BYTES = 1 << 20;

    private final FabricRuntime runtime;
    private final MessagingNode node;
    private final SerializationRegistry registry;
    private final Transport transport;
    private final Duration callTimeout;
    private final int threads;
    private final OneToOneRingBuffer[] queues;
    private final MemorySegment[] queueMemory;
    private final Arena queueArena = Arena.ofShared();
    /** The service thread's view of the call it is routing (its thread only). */
    private final UnsafeBuffer routed = new UnsafeBuffer(0, 0);

    /** Registers the service handler: call before joining, as a peer may make a send-based call once the job forms. */
    SendCalls(FabricRuntime runtime, MessagingNode node, SerializationRegistry registry, Transport transport,
              Duration callTimeout, int threads) {
        this.runtime = runtime;
        this.node = node;
        this.registry = registry;
        this.transport = transport;
        this.callTimeout = callTimeout;
        this.threads = threads;
        this.queues = new OneToOneRingBuffer[threads];
        this.queueMemory = new MemorySegment[threads];
        for (int i = 0; i < threads; i++) {
            int length = QUEUE_BYTES + RingBufferDescriptor.TRAILER_LENGTH;
            queueMemory[i] = queueArena.allocate(length, 64);
            queues[i] = new OneToOneRingBuffer(new UnsafeBuffer(queueMemory[i].address(), length));
        }
        node.service().register(SendCallDescriptor.MESSAGE_TYPE, this::route);
    }

    /** A calling thread's encoders per destination and the native buffer it encodes its calls into. */
    static final class Sender {
        private final CallEncoder[] encoders;
        private MemorySegment staging;

        Sender(int jobThreads) {
            this.encoders = new CallEncoder[jobThreads];
        }
    }

    /** Sends {@code function} to worker {@code dest} (global index {@code global}) from the calling thread. */
    boolean send(ThreadContext context, ThreadId dest, int global, Serializable function) {
        Sender sender = context.sendCalls;
        CallEncoder encoder = sender.encoders[global];
        if (encoder == null) {
            encoder = new CallEncoder(registry, ThreadId.fromLong(context.senderId) + " => " + dest);
            sender.encoders[global] = encoder;
        }
        if (sender.staging == null) {
            // Native, as every other segment calls are encoded into: a heap one would make the JIT's profile of the
            // shared capture writers polymorphic, and every call path would take the slow segment access.
            sender.staging = Arena.ofAuto().allocate(transport.maxMessageSize(), Long.BYTES);
        }
        MemorySegment staging = sender.staging;
        int length = encoder.encode(function, staging, SendCallDescriptor.HEADER_LENGTH, staging.byteSize());
        if (length < 0) {
            throw new MessagingException("send-based call of more than "
                    + (staging.byteSize() - SendCallDescriptor.HEADER_LENGTH)
                    + " bytes does not fit one transport message (" + transport.maxMessageSize() + " bytes)");
        }
        SendCallDescriptor.writeHeader(staging, dest.threadIndex(), InvocationRecords.CALL, context.senderId);
        Link link = runtime.link(dest.rank());
        // The record is encoded (its definition counted as sent): it must go out, so a full queue is waited out.
        long start = 0;
        while (!link.send(SendCallDescriptor.MESSAGE_TYPE, staging, 0, SendCallDescriptor.HEADER_LENGTH + length)) {
            if (start == 0) {
                start = System.nanoTime();
            }
            runtime.checkAlive(dest.rank());
            if (System.nanoTime() - start > callTimeout.toNanos()) {
                throw new MessagingException("the message queue of rank " + dest.rank() + " stayed full for "
                        + callTimeout.toMillis() + " ms");
            }
            runtime.help();
            Thread.onSpinWait();
        }
        return true;
    }

    /** Service thread: moves a send-based call into its worker's queue, waiting while that queue is full. */
    private void route(Link from, int type, MemorySegment payload) {
        int worker = SendCallDescriptor.worker(payload);
        int kind = SendCallDescriptor.kind(payload);
        if (worker < 0 || worker >= threads || kind <= 0 || payload.byteSize() <= SendCallDescriptor.HEADER_LENGTH) {
            throw new IllegalArgumentException("malformed send-based call for worker " + worker + ", kind " + kind
                    + ", " + payload.byteSize() + " bytes from endpoint " + Long.toHexString(from.peerId()));
        }
        if (node.isFenced(SendCallDescriptor.sender(payload))) {
            return; // from a rank the job declared failed: never run
        }
        // The queued form: | sender | call record |.
        routed.wrap(payload.address() + SendCallDescriptor.SENDER_OFFSET,
                (int) payload.byteSize() - SendCallDescriptor.SENDER_OFFSET);
        while (!queues[worker].write(kind, routed, 0, routed.capacity())) {
            if (runtime.isClosed()) {
                return;
            }
            LockSupport.parkNanos(10_000);
        }
    }

    /** Runs up to 64 of the calling worker's queued send-based calls. */
    int runQueued(ThreadContext worker) {
        int index = worker.workerIndex;
        return queues[index].read(worker.receiver.sendQueueReader(queueMemory[index]), 64);
    }

    void close() {
        queueArena.close();
    }
}
