package io.fabricrpc.benchmarks.table2;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.invocation.ChannelViews;
import io.fabricrpc.transport.EndpointAddress;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.transport.Transport;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import static io.fabricrpc.benchmarks.table2.Table2FileDescriptor.*;

/**
 * The {@code max-raw} baseline over the fabric's own transport (Seriema's control column): one {@link Link#write}
 * (one RDMA WRITE under {@code fabric.transport=rdma}) per message carrying the same longs as a call, with no
 * serialization and no invocation, into a ring of slots in the receiver's registered memory; the receiver sums
 * each message's longs as the calls' bodies do. It shares the fabric's link (its QP) to the peer.
 *
 * <pre>
 * Slot (SLOT_BYTES each, SLOTS per ring, in rank 1's ring region):
 *   0 ............................. SLOT_BYTES - 8 - n ....... SLOT_BYTES - 8 ....... SLOT_BYTES
 *   | unused                        | payload longs (n bytes)  | word: seq << 16 | n |
 * </pre>
 * One WRITE covers the payload and the word; the receiver polls the word of the next slot for the next sequence
 * number (stale words carry older ones). Credits: the receiver writes its consumed count into rank 0's credit
 * region (one {@link Link#writeLong} every {@code SLOTS / 4} messages); the sender never runs more than
 * {@code SLOTS} messages ahead of it.
 *
 * <p>Ordering: the receiver's acquiring read of a slot's word sees the payload before it only if the transport
 * places a WRITE's bytes in address order: RC over rxe (and every HCA perftest's latency test relies on) does,
 * the InfiniBand specification does not promise it. This is a baseline, not a protocol of the fabric (whose
 * messengers publish with a separate flag write). Confined to the measuring thread of each rank.
 */
final class LinkWriteColumn implements Column {
    static final String NAME = "max-raw";
    static final int SLOTS = 1024;
    static final int SLOT_BYTES = 320;
    private static final int WORD = SLOT_BYTES - Long.BYTES;
    private static final int CREDIT_EVERY = SLOTS / 4;
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final int rank;
    private final UnsafeBuffer control;
    private final Transport transport;
    private final long timeoutNanos;
    private final IdleStrategy idle = RawRingColumn.newIdleStrategy();
    /** Rank 0: the staging slots (source of the writes) and the credit word rank 1 writes; rank 1: the ring. */
    private final LocalRegion staging;
    private final LocalRegion credits;
    private final LocalRegion ring;
    private Link link;
    private RemoteRegion peerRegion;
    /** Rank 0: messages sent; rank 1: messages consumed (the sequence number of the last one). */
    private long count;
    private long creditSeen;

    /**
     * Allocates this rank's regions on the fabric's transport and publishes them with this endpoint's address in
     * this rank's exchange block of {@code control}.
     */
    LinkWriteColumn(Fabric fabric, UnsafeBuffer control, long timeoutMillis) {
        this.rank = fabric.rank();
        this.control = control;
        this.transport = ChannelViews.of(fabric).transport();
        this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        int block = exchangeOffset(rank);
        if (rank == 0) {
            staging = transport.allocate((long) SLOTS * SLOT_BYTES, RemoteAccess.NONE);
            credits = transport.allocate(64, RemoteAccess.WRITE); // the peer only writes the consumed count
            ring = null;
            encode(credits.remote(), block + EXCHANGE_CREDIT_HANDLE);
        } else {
            staging = null;
            credits = null;
            ring = transport.allocate((long) SLOTS * SLOT_BYTES, RemoteAccess.WRITE); // the peer only writes slots
            encode(ring.remote(), block + EXCHANGE_RING_HANDLE);
        }
        byte[] address = encodeAddress(transport.address());
        control.putInt(block + EXCHANGE_ADDRESS_LENGTH, address.length);
        control.putBytes(block + EXCHANGE_ADDRESS, address);
        control.putLongRelease(block + EXCHANGE_PUBLISHED, 1); // release: handles and address are written first
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public long sendUntil(int payloadBytes, long first, long deadlineNanos) {
        int longs = Payloads.checkedLongs(payloadBytes);
        connect();
        MemorySegment src = staging.segment();
        int from = WORD - payloadBytes;
        long i = first;
        do {
            for (int b = 0; b < FabricColumn.BATCH; b++, i++) {
                long seq = count + 1;
                awaitCredit(seq, payloadBytes);
                long slot = (seq % SLOTS) * SLOT_BYTES;
                for (int j = 0; j < longs; j++) {
                    src.set(ValueLayout.JAVA_LONG, slot + from + (long) j * Long.BYTES, i + j);
                }
                // Plain stores: the post inside write() is a native call; the device reads the slot after it.
                src.set(ValueLayout.JAVA_LONG, slot + WORD, seq << 16 | payloadBytes);
                link.write(staging, slot + from, peerRegion, slot + from, payloadBytes + Long.BYTES);
                count = seq;
            }
        } while (System.nanoTime() - deadlineNanos < 0);
        return i - first;
    }

    /** Waits until slot {@code seq} is free: the receiver has consumed message {@code seq - SLOTS}. */
    private void awaitCredit(long seq, int payloadBytes) {
        if (seq - creditSeen <= SLOTS) {
            return;
        }
        creditSeen = (long) LONG.getAcquire(credits.segment(), 0L); // pairs with the receiver's ordered writeLong
        if (seq - creditSeen <= SLOTS) {
            return;
        }
        long start = System.nanoTime();
        idle.reset();
        while (seq - (creditSeen = (long) LONG.getAcquire(credits.segment(), 0L)) > SLOTS) {
            if (System.nanoTime() - start > timeoutNanos) {
                throw new IllegalStateException(NAME + ", " + payloadBytes + " B: the receiver consumed up to message "
                        + creditSeen + " and nothing more for " + TimeUnit.NANOSECONDS.toMillis(timeoutNanos)
                        + " ms; message " + seq + " needs slot " + seq % SLOTS + " of " + SLOTS);
            }
            link.checkAlive();
            idle.idle();
        }
    }

    @Override
    public void flush() {
        // every message was posted by write(); the receiver's count tells the sender when they have landed
    }

    @Override
    public int poll() {
        if (link == null) {
            connect();
        }
        MemorySegment slots = ring.segment();
        int ran = 0;
        while (ran < RawRingColumn.READ_LIMIT) {
            long next = count + 1;
            long slot = (next % SLOTS) * SLOT_BYTES;
            long word = (long) LONG.getAcquire(slots, slot + WORD); // the WRITE placed the payload before it (see above)
            if (word >>> 16 != next) {
                break;
            }
            int n = (int) (word & 0xFFFF);
            long sum = 0;
            for (long at = slot + WORD - n; at < slot + WORD; at += Long.BYTES) {
                sum += slots.get(ValueLayout.JAVA_LONG, at);
            }
            Payloads.Sink.take(sum);
            count = next;
            ran++;
            if (next % CREDIT_EVERY == 0) {
                link.writeLong(peerRegion, 0, next); // ordered after our reads of the consumed slots
            }
        }
        return ran;
    }

    /** Looks up the peer's published block (bounded wait) and the link to it. */
    private void connect() {
        if (link != null) {
            return;
        }
        int block = exchangeOffset(1 - rank);
        long start = System.nanoTime();
        while (control.getLongAcquire(block + EXCHANGE_PUBLISHED) != 1) { // pairs with the peer's release
            if (System.nanoTime() - start > timeoutNanos) {
                throw new IllegalStateException(NAME + ": rank " + (1 - rank) + " published no exchange block within "
                        + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms");
            }
            Thread.onSpinWait();
        }
        int length = control.getInt(block + EXCHANGE_ADDRESS_LENGTH);
        if (length <= 0 || length > EXCHANGE_ADDRESS_MAX) {
            throw new IllegalStateException(NAME + ": rank " + (1 - rank) + "'s address length is " + length
                    + ", expected 1.." + EXCHANGE_ADDRESS_MAX);
        }
        byte[] bytes = new byte[length];
        control.getBytes(block + EXCHANGE_ADDRESS, bytes);
        EndpointAddress peer = decodeAddress(bytes);
        peerRegion = RemoteRegion.decode(MemorySegment.ofAddress(control.addressOffset()).reinterpret(control.capacity()),
                block + (rank == 0 ? EXCHANGE_RING_HANDLE : EXCHANGE_CREDIT_HANDLE));
        link = transport.connect(peer);
    }

    private void encode(RemoteRegion handle, int offset) {
        handle.encode(MemorySegment.ofAddress(control.addressOffset()).reinterpret(control.capacity()), offset);
    }

    /** kind length (1) | kind (UTF-8) | address bytes. */
    private static byte[] encodeAddress(EndpointAddress address) {
        byte[] kind = address.kind().getBytes(StandardCharsets.UTF_8);
        byte[] bytes = address.bytes();
        if (kind.length > 127 || 1 + kind.length + bytes.length > EXCHANGE_ADDRESS_MAX) {
            throw new IllegalStateException(NAME + ": endpoint address " + address + " does not fit "
                    + EXCHANGE_ADDRESS_MAX + " bytes");
        }
        byte[] out = new byte[1 + kind.length + bytes.length];
        out[0] = (byte) kind.length;
        System.arraycopy(kind, 0, out, 1, kind.length);
        System.arraycopy(bytes, 0, out, 1 + kind.length, bytes.length);
        return out;
    }

    private static EndpointAddress decodeAddress(byte[] in) {
        int kindLength = in[0];
        if (kindLength <= 0 || 1 + kindLength > in.length) {
            throw new IllegalStateException(NAME + ": corrupt endpoint address, kind length " + kindLength + " of "
                    + in.length + " bytes");
        }
        String kind = new String(in, 1, kindLength, StandardCharsets.UTF_8);
        byte[] bytes = new byte[in.length - 1 - kindLength];
        System.arraycopy(in, 1 + kindLength, bytes, 0, bytes.length);
        return new EndpointAddress(kind, bytes);
    }

    @Override
    public String toString() {
        return NAME + " (Link.write of the payload into a ring of " + SLOTS + " slots over " + transport.kind() + ")";
    }
}
