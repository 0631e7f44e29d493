package io.fabricrpc.invocation;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Layout of a send-based call: one two-sided transport message of type {@link #MESSAGE_TYPE}, little-endian, unaligned.
 * The receiving service thread queues everything from {@link #SENDER_OFFSET} on into the worker's ring, with the kind
 * as the ring message's type, so the queued form is | sender thread (8) | call record |.
 * <pre>
 *   0                   4                   8                                  16
 *   +-------------------+-------------------+----------------------------------+----------------------
 *   | destination worker| kind              | sender thread (ThreadId packed)  | call record ...
 *   +-------------------+-------------------+----------------------------------+----------------------
 * </pre>
 */
final class SendCallDescriptor {
    /** The transport message type of a send-based call. */
    static final int MESSAGE_TYPE = 0x4D490001;
    /** The destination's worker index within its process. */
    static final int WORKER_OFFSET = 0;
    /** The invocation kind (an {@link InvocationRecords} kind, greater than 0). */
    static final int KIND_OFFSET = 4;
    /** The calling thread's packed id: where the queued form starts. */
    static final int SENDER_OFFSET = 8;
    static final int HEADER_LENGTH = 16;
    /** In the worker's queue: the call record follows the sender id. */
    static final int QUEUED_RECORD_OFFSET = 8;

    private SendCallDescriptor() {
    }

    static void writeHeader(MemorySegment message, int worker, int kind, long sender) {
        message.set(ValueLayout.JAVA_INT_UNALIGNED, WORKER_OFFSET, worker);
        message.set(ValueLayout.JAVA_INT_UNALIGNED, KIND_OFFSET, kind);
        message.set(ValueLayout.JAVA_LONG_UNALIGNED, SENDER_OFFSET, sender);
    }

    static int worker(MemorySegment message) {
        return message.get(ValueLayout.JAVA_INT_UNALIGNED, WORKER_OFFSET);
    }

    static int kind(MemorySegment message) {
        return message.get(ValueLayout.JAVA_INT_UNALIGNED, KIND_OFFSET);
    }

    static long sender(MemorySegment message) {
        return message.get(ValueLayout.JAVA_LONG_UNALIGNED, SENDER_OFFSET);
    }
}
