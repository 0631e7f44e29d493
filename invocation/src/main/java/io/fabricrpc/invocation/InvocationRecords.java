package io.fabricrpc.invocation;

/**
 * The invocation record: what a messenger record carries for each call primitive. The kind travels in the
 * messenger record's tag (no extra byte); a kind-specific header, if any, precedes the call record of
 * {@link io.fabricrpc.serialization.CallRecordDescriptor}. Integers are little-endian, unaligned.
 *
 * <pre>
 * CALL                 | call record |
 * CALL_BUFFER          | call record | buffer bytes (the rest of the record) |
 * CALL_BUFFER_WRITTEN  | region id (8) | offset (8) | length (8) | call record |
 *                        the bytes were written one-sided into the receiver's region before this record
 * CALL_BUFFER_READ     | source region (40) | offset (8) | length (8) | call record |
 *                        the receiver reads them one-sided from the caller's region
 * SHUTDOWN_SIGNAL      (empty) the sender's channel to this worker is closed: no call follows it
 * BROADCAST            see {@link BroadcastRecordDescriptor}
 *
 * (callReturn travels over mailbox ports, not as a record: see ReturnCalls. Kind 5 is retired.)
 * Broadcast ack region (in the root thread's memory): one 8-byte word per worker thread of the job, each
 *  written only by that thread with the sequence of the latest broadcast it ran.
 * </pre>
 */
public final class InvocationRecords {
    public static final int CALL = 1;
    public static final int CALL_BUFFER = 2;
    public static final int CALL_BUFFER_WRITTEN = 3;
    public static final int CALL_BUFFER_READ = 4;
    public static final int BROADCAST = 6;
    public static final int SHUTDOWN_SIGNAL = 7;

    // The broadcast record's flags and header: BroadcastRecordDescriptor defines them.
    static final int BROADCAST_ACK = BroadcastRecordDescriptor.FLAG_ACK;
    static final int BROADCAST_INLINE = BroadcastRecordDescriptor.FLAG_INLINE;
    static final int BROADCAST_READ = BroadcastRecordDescriptor.FLAG_READ;
    static final int BROADCAST_WRITTEN = BroadcastRecordDescriptor.FLAG_WRITTEN;

    static final int BROADCAST_ROOT = BroadcastRecordDescriptor.ROOT_OFFSET;
    static final int BROADCAST_SPAN = BroadcastRecordDescriptor.SPAN_OFFSET;
    static final int BROADCAST_FLAGS = BroadcastRecordDescriptor.FLAGS_OFFSET;
    static final int BROADCAST_SEQUENCE = BroadcastRecordDescriptor.SEQUENCE_OFFSET;
    static final int BROADCAST_HEADER = BroadcastRecordDescriptor.HEADER_LENGTH;

    private InvocationRecords() {
    }
}
