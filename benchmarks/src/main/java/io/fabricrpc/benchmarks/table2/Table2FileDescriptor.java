package io.fabricrpc.benchmarks.table2;

import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

/**
 * Layout of the shared file both ranks of a Table 2 run map (a 0600 {@code bench-*.ring} file in the transport's
 * per-user 0700 directory): a control block through which the sender (rank 0) drives the receiver (rank 1)
 * measurement by measurement, followed by the {@code raw} column's Agrona ring. The control block is the same
 * for every column, so it costs every column alike, and none of it is touched per call. Under RDMA the two ranks
 * share one (guest) machine, so the control block stays in this file while the calls cross the RDMA transport;
 * it also carries the round gate to the launching benchmark (which runs the baselines between rounds) and the
 * handles the {@code max-raw} column exchanges.
 *
 * <pre>
 *   0                   64                  128                 192
 *   +-------------------+-------------------+-------------------+-------------------+
 *   | command seq (8)   | ack seq (8)       | received (8)      | ready (8)         |
 *   | column (4)        |                   |                   |                   |
 *   | payload bytes (4) |                   |                   |                   |
 *   +-------------------+-------------------+-------------------+-------------------+
 *   256: result line: receiver allocated bytes (8) | receiver sum (8) | receiver count (8) |
 *        bytes the receiver's other threads allocated (8) | receiver thread CPU nanoseconds (8) |
 *        receiver JVM's JIT compilation milliseconds so far (8)
 *   320: gate request (8)      384: gate grant (8)
 *   1024: rank 0's max-raw exchange block      2048: rank 1's max-raw exchange block (EXCHANGE_LENGTH each):
 *        +0 published (8) | +8 endpoint address length (4) | +16 ring region handle (RemoteRegion, 40)
 *        | +56 credit region handle (RemoteRegion, 40) | +128 endpoint address bytes (up to 896)
 *   3072: the ucx column's block (rank 1 writes it): published (8) | +8 UCP worker address length (4)
 *        | +16 worker address bytes (up to 1008)
 *   +-------------------------------------------------------------------------------+
 *   CONTROL_LENGTH (4096): raw column's OneToOneRingBuffer: capacity + RingBufferDescriptor.TRAILER_LENGTH
 *   +-------------------------------------------------------------------------------+
 * </pre>
 *
 * <ul>
 *   <li>command seq: written by the sender with a release store after the column and payload fields, so the
 *       receiver's acquire load of a new sequence sees them. Column {@link #COLUMN_PAUSE} ends a measurement,
 *       {@link #COLUMN_STOP} ends the run.</li>
 *   <li>ack seq: the receiver's release store once it has acted on a command (reset its counters, or written
 *       the result line, which the release orders before the ack).</li>
 *   <li>received: calls the receiver has run in the current measurement, release-stored after each poll that ran
 *       some; the sender reads it only after it stopped sending.</li>
 *   <li>ready: 1 once the receiver has joined and built its columns (release).</li>
 *   <li>gate request / grant: with a gate, rank 0 release-stores round + 1 into the request before each round
 *       (and rounds + 1 after the last) and waits, idle, until the launching benchmark release-stores the same
 *       value into the grant after running its baselines.</li>
 *   <li>exchange blocks: each rank writes its endpoint address and region handles, then release-stores
 *       published = 1; the peer acquires published before reading them. The ucx block works alike, one way.</li>
 * </ul>
 * Each word the two sides write sits on its own cache line.
 */
public final class Table2FileDescriptor {
    public static final int COMMAND_SEQUENCE_OFFSET = 0;
    public static final int COMMAND_COLUMN_OFFSET = 8;
    public static final int COMMAND_PAYLOAD_OFFSET = 12;
    public static final int ACK_SEQUENCE_OFFSET = 64;
    public static final int RECEIVED_OFFSET = 128;
    public static final int READY_OFFSET = 192;
    public static final int RESULT_ALLOCATED_OFFSET = 256;
    public static final int RESULT_SUM_OFFSET = 264;
    public static final int RESULT_COUNT_OFFSET = 272;
    public static final int RESULT_OTHERS_ALLOCATED_OFFSET = 280;
    public static final int RESULT_CPU_NANOS_OFFSET = 288;
    public static final int RESULT_JIT_MILLIS_OFFSET = 296;
    public static final int GATE_REQUEST_OFFSET = 320;
    public static final int GATE_GRANT_OFFSET = 384;
    public static final int EXCHANGE_OFFSET = 1024;
    public static final int EXCHANGE_LENGTH = 1024;
    public static final int EXCHANGE_PUBLISHED = 0;
    public static final int EXCHANGE_ADDRESS_LENGTH = 8;
    public static final int EXCHANGE_RING_HANDLE = 16;
    public static final int EXCHANGE_CREDIT_HANDLE = 56;
    public static final int EXCHANGE_ADDRESS = 128;
    public static final int EXCHANGE_ADDRESS_MAX = EXCHANGE_LENGTH - EXCHANGE_ADDRESS;
    public static final int UCX_EXCHANGE_OFFSET = EXCHANGE_OFFSET + 2 * EXCHANGE_LENGTH;
    public static final int UCX_PUBLISHED = 0;
    public static final int UCX_ADDRESS_LENGTH = 8;
    /** Rank 0 sets it (release) once its UCX endpoint is closed: rank 1 progresses its worker until then. */
    public static final int UCX_SENDER_CLOSED = 16;
    public static final int UCX_ADDRESS = 24;
    public static final int UCX_ADDRESS_MAX = 1024 - UCX_ADDRESS;
    /** Bytes before the ring; a page, so the ring starts page-aligned. */
    public static final int CONTROL_LENGTH = 4096;
    public static final int RING_OFFSET = CONTROL_LENGTH;

    /** Command column value ending the current measurement. */
    public static final int COLUMN_PAUSE = -1;
    /** Command column value ending the run. */
    public static final int COLUMN_STOP = -2;

    private Table2FileDescriptor() {
    }

    /** Offset of {@code rank}'s exchange block (rank 0 or 1). */
    public static int exchangeOffset(int rank) {
        return EXCHANGE_OFFSET + rank * EXCHANGE_LENGTH;
    }

    /** Bytes of the raw column's ring region for a ring of {@code capacity} data bytes (a power of two). */
    public static int ringLength(int capacity) {
        return capacity + RingBufferDescriptor.TRAILER_LENGTH;
    }

    /** Length of the whole file. */
    public static int fileLength(int ringCapacity) {
        return CONTROL_LENGTH + ringLength(ringCapacity);
    }
}
