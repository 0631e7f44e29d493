package io.fabricrpc.transport.rdma.spi;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * Layout of the registered memory each {@link RdmaLink} owns: a control block the peer may read (and nothing else),
 * and a data block only this side's QP touches.
 *
 * <pre>
 * Control block (own MR: LOCAL_WRITE | REMOTE_READ), {@link #CONTROL_LENGTH} bytes:
 *  0                   8                   16                                    64
 *  +-------------------+-------------------+-------------------------------------+
 *  | consumed          | peer snapshot     | reserved                            |
 *  +-------------------+-------------------+-------------------------------------+
 *  consumed:      receive buffers this side has delivered and reposted (the peer's send credits); the peer
 *                 RDMA-READs it when it believes it has no credit left
 *  peer snapshot: target of this side's RDMA READ of the peer's consumed word (credit refresh and flush WR)
 *
 * Data block (own MR: LOCAL_WRITE only):
 *  +---------------------------+------------------------------------+------------------------------------+
 *  | scratch: sqDepth x 32     | receive slots: recvDepth x slot    | send slots: sqDepth x slot         |
 *  +---------------------------+------------------------------------+------------------------------------+
 *  scratch:  source of writeLong, writeAndFlag's flag and writePublishedInline (up to Link.MAX_INLINE_LENGTH bytes);
 *            slot = WR number mod sqDepth (a pair uses its second WR's slot), free again once that WR is out of
 *            the SQ window
 *  slot:     see {@link #SLOT_TYPE_OFFSET}: | type (int) | reserved (int) | payload (maxMessageSize) |
 * </pre>
 */
final class LinkMemoryDescriptor {
    static final long CONSUMED_OFFSET = 0;
    static final long SNAPSHOT_OFFSET = 8;
    static final int CONTROL_LENGTH = 64;

    static final int SLOT_TYPE_OFFSET = 0;
    static final int SLOT_PAYLOAD_OFFSET = 8;

    /** Type of the handshake message (user types are > 0). */
    static final int HELLO_TYPE = 0;

    /**
     * Handshake payload, the first SEND on every QP in both directions:
     * <pre>
     *  0             8                16      20          24     28     32          36
     *  | endpoint id | control address| rkey  | recvDepth | ipv4 | port | slot size |
     * </pre>
     */
    static final int HELLO_ENDPOINT_ID = 0;
    static final int HELLO_CONTROL_ADDRESS = 8;
    static final int HELLO_CONTROL_KEY = 16;
    static final int HELLO_RECV_DEPTH = 20;
    static final int HELLO_IPV4 = 24;
    static final int HELLO_PORT = 28;
    static final int HELLO_SLOT_SIZE = 32;
    static final int HELLO_LENGTH = 36;

    static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    static final ValueLayout.OfLong LONG_LAYOUT = ValueLayout.JAVA_LONG_UNALIGNED;
    static final ValueLayout.OfInt INT_LAYOUT = ValueLayout.JAVA_INT_UNALIGNED;

    private LinkMemoryDescriptor() {
    }

    static int slotSize(int maxMessageSize) {
        return SLOT_PAYLOAD_OFFSET + maxMessageSize;
    }

    /** Bytes of one scratch slot: {@link io.fabricrpc.transport.Link#MAX_INLINE_LENGTH}. */
    static final int SCRATCH_STRIDE = io.fabricrpc.transport.Link.MAX_INLINE_LENGTH;

    static long scratchOffset(long ticket, int sqDepth) {
        return (long) SCRATCH_STRIDE * (ticket % sqDepth);
    }

    static long receiveSlotOffset(int slot, int sqDepth, int slotSize) {
        return (long) SCRATCH_STRIDE * sqDepth + (long) slot * slotSize;
    }

    static long sendSlotOffset(long ticket, int sqDepth, int recvDepth, int slotSize) {
        return (long) SCRATCH_STRIDE * sqDepth + (long) recvDepth * slotSize + (ticket % sqDepth) * slotSize;
    }

    static long dataLength(int sqDepth, int recvDepth, int slotSize) {
        return (long) SCRATCH_STRIDE * sqDepth + (long) (recvDepth + sqDepth) * slotSize;
    }

    /** Publishes the consumed count (release: the reposted receive buffers are posted before peers can see it). */
    static void publishConsumed(MemorySegment control, long consumed) {
        LONG.setRelease(control, CONSUMED_OFFSET, consumed);
    }

    /** Reads the snapshot an RDMA READ placed (acquire, after the READ's completion was observed). */
    static long snapshot(MemorySegment control) {
        return (long) LONG.getAcquire(control, SNAPSHOT_OFFSET);
    }
}
