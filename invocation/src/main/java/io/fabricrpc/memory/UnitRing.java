package io.fabricrpc.memory;

import io.fabricrpc.api.MemoryExhaustedException;

import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.util.Arrays;

/**
 * The ring both circular allocators move around: units in reuse order, {@code head} the oldest. Growth inserts new
 * units at the head (so they are used next and the order of the others is kept); only growth allocates.
 * Single-threaded.
 */
final class UnitRing {
    private final SlabPool pool;
    final RingConfig config;
    private final IdleStrategy idle = new BackoffIdleStrategy(64, 16, 1_000, 100_000);
    private Unit[] ring = new Unit[0];
    /** Every unit by id (ids are stable; ring positions move when the ring grows). */
    private Unit[] byId = new Unit[0];
    private int count;
    private int head;
    private LocalRegion slab;
    private long slabFill;

    UnitRing(SlabPool pool, RingConfig config) {
        this.pool = pool;
        this.config = config;
        grow();
    }

    int count() {
        return count;
    }

    Unit unit(int id) {
        if (id < 0 || id >= count) {
            throw new IllegalArgumentException("no unit " + id + " in a ring of " + count + " units");
        }
        return byId[id];
    }

    /** The oldest unit, advancing past it, if it is reusable or the ring could grow; null otherwise. */
    Unit tryAdvance() {
        Unit unit = ring[head];
        if (!unit.reusable()) {
            if (!grow()) {
                return null;
            }
            unit = ring[head];
        }
        head = head + 1 == count ? 0 : head + 1;
        return unit;
    }

    /**
     * {@link #tryAdvance()}, waiting up to {@code maxWait} for the oldest unit's tag to complete.
     *
     * @throws MemoryExhaustedException if the ring is at its maximum and the oldest unit is held by the caller
     *                                  (not released) or its operation did not complete in time
     * @throws io.fabricrpc.api.PeerFailedException if the link of the oldest unit's operation fails
     */
    Unit advance(String what) {
        Unit unit = tryAdvance();
        if (unit != null) {
            return unit;
        }
        long deadline = System.nanoTime() + config.maxWait().toNanos();
        idle.reset();
        while (true) {
            Unit oldest = ring[head];
            if (oldest.outstanding > 0) {
                throw full(what, oldest, "is still held (" + oldest.outstanding + " not released)");
            }
            Link link = oldest.pendingLink();
            if (link != null) {
                link.checkAlive();
            }
            unit = tryAdvance();
            if (unit != null) {
                return unit;
            }
            if (System.nanoTime() - deadline >= 0) {
                throw full(what, oldest, "waits for ticket " + oldest.pendingTicket() + " on " + link + ", not complete after "
                        + config.maxWait().toMillis() + " ms");
            }
            idle.idle();
        }
    }

    private MemoryExhaustedException full(String what, Unit oldest, String why) {
        return new MemoryExhaustedException(what + ": ring full at its maximum of " + config.maxUnits() + " units of "
                + config.unitBytes() + " bytes (" + config.maxBytes() + " bytes) and the oldest unit " + oldest.id + " "
                + why);
    }

    private boolean grow() {
        int add = count == 0 ? config.initialUnits()
                : config.growth() == RingConfig.Growth.LINEAR ? config.initialUnits() : count;
        add = Math.min(add, config.maxUnits() - count);
        if (add <= 0) {
            return false;
        }
        Unit[] fresh = new Unit[add];
        int unitBytes = config.unitBytes();
        for (int i = 0; i < add; i++) {
            if (slab == null || slab.length() - slabFill < unitBytes) {
                // A request for the rest of the growth at once: one slab (or one larger region) per growth step.
                slab = pool.slab((long) unitBytes * (add - i));
                slabFill = 0;
            }
            fresh[i] = new Unit(count + i, slab, slabFill, unitBytes);
            slabFill += unitBytes;
        }
        Unit[] grown = new Unit[count + add];
        System.arraycopy(ring, 0, grown, 0, head);
        System.arraycopy(fresh, 0, grown, head, add);
        System.arraycopy(ring, head, grown, head + add, count - head);
        byId = Arrays.copyOf(byId, count + add);
        System.arraycopy(fresh, 0, byId, count, add);
        ring = grown;
        count += add;
        return true;
    }
}
