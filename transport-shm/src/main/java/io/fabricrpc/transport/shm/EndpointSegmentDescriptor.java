package io.fabricrpc.transport.shm;

import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

/**
 * Layout of an endpoint file {@code ep-<endpoint id>.shm}: the common header, then the endpoint's incoming
 * two-sided message queue, an Agrona many-to-one ring buffer that every peer appends to (CAS on its tail, so
 * it is safe across processes) and only the owner consumes.
 *
 * <pre>
 *  0                                   4096                                   4096 + capacity + trailer
 *  +-----------------------------------+--------------------------------------+
 *  | SegmentHeaderDescriptor (4096)    | message ring (Agrona ManyToOne)      |
 *  +-----------------------------------+--------------------------------------+
 *  ring record payload: | sender endpoint id (8) | message bytes ... |   record type = message type (> 0)
 * </pre>
 */
final class EndpointSegmentDescriptor {
    static final int RING_OFFSET = SegmentHeaderDescriptor.HEADER_LENGTH;
    static final int SENDER_ID_LENGTH = 8;

    private EndpointSegmentDescriptor() {
    }

    static long fileLength(int ringCapacity) {
        return RING_OFFSET + ringLength(ringCapacity);
    }

    static int ringLength(int ringCapacity) {
        return ringCapacity + RingBufferDescriptor.TRAILER_LENGTH;
    }

    /** Agrona's limit for one record is capacity / 8; our payload loses the sender id. */
    static int maxMessageSize(int ringCapacity) {
        return ringCapacity / 8 - SENDER_ID_LENGTH;
    }
}
