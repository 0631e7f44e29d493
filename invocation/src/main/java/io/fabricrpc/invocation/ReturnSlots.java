package io.fabricrpc.invocation;

import io.fabricrpc.transport.LocalRegion;
import io.fabricrpc.transport.RemoteAccess;
import io.fabricrpc.transport.Transport;

import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Return slots for {@code callReturn}: memory of this process that destinations write results into
 * (layout in {@link InvocationRecords}). Slots come from regions of {@value #SLOTS_PER_REGION}; taking and
 * returning one is a short critical section (a call that waits for a round trip anyway).
 */
final class ReturnSlots implements AutoCloseable {
    static final int SLOTS_PER_REGION = 64;
    static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle();

    /** One slot: its region and offset, and the sequence its next result must carry. */
    static final class Slot {
        final LocalRegion region;
        final long offset;
        long sequence;

        Slot(LocalRegion region, long offset) {
            this.region = region;
            this.offset = offset;
        }

        /**
         * True once the result with {@link #sequence} has arrived (acquire pairs with the writer's ordered flag).
         * Equality, not {@code >=}: a sequence placed byte by byte reads as a mix of old and new bytes, which equals
         * the new value only once every byte that changed has landed, after the result's earlier write.
         */
        boolean arrived() {
            return (long) WORD.getAcquire(region.segment(), offset + InvocationRecords.SLOT_SEQUENCE) == sequence;
        }

        int length() {
            return region.segment().get(ValueLayout.JAVA_INT, offset + InvocationRecords.SLOT_LENGTH);
        }
    }

    private final Transport transport;
    private final int slotBytes;
    private final ArrayDeque<Slot> free = new ArrayDeque<>();
    private final List<LocalRegion> regions = new ArrayList<>();
    private long sequences;

    ReturnSlots(Transport transport, int slotBytes) {
        this.transport = transport;
        this.slotBytes = slotBytes;
    }

    int slotBytes() {
        return slotBytes;
    }

    synchronized Slot take() {
        if (free.isEmpty()) {
            LocalRegion region = transport.allocate((long) slotBytes * SLOTS_PER_REGION, RemoteAccess.WRITE);
            regions.add(region);
            for (int i = 0; i < SLOTS_PER_REGION; i++) {
                free.add(new Slot(region, (long) i * slotBytes));
            }
        }
        Slot slot = free.poll();
        slot.sequence = ++sequences; // never 0, never reused: a late result for an older call cannot match
        return slot;
    }

    synchronized void give(Slot slot) {
        free.add(slot);
    }

    @Override
    public synchronized void close() {
        regions.forEach(LocalRegion::close);
    }
}
