package io.fabricrpc.memory;

import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;

import java.lang.foreign.MemorySegment;

/**
 * One fixed-size piece of a slab in a {@link CircularAllocator} ring. Created when the ring grows and reused for
 * the ring's lifetime, so handing one out allocates nothing.
 *
 * <p>Use: fill {@link #segment()} (or name {@link #region()} at {@link #offset()} in a transport operation), then
 * {@link #release(Link, long)} with the ticket of the last operation that read from the unit. The unit comes
 * round again only after that ticket {@linkplain Link#isComplete completes}. Owned by the allocator's thread:
 * not thread-safe.
 */
public final class Unit {
    final int id;
    private final LocalRegion region;
    private final long offset;
    private final int size;
    private final MemorySegment segment;
    /** Segments (or, in a circular ring, the one holder) not yet released; the unit is not reused while > 0. */
    int outstanding;
    /** Tag of the last operation that read from the unit; null once known complete. */
    private Link tagLink;
    private long tagTicket;

    Unit(int id, LocalRegion region, long offset, int size) {
        this.id = id;
        this.region = region;
        this.offset = offset;
        this.size = size;
        this.segment = region.segment().asSlice(offset, size);
    }

    /** The slab region holding the unit (the region to name in transport operations). */
    public LocalRegion region() {
        return region;
    }

    /** Where the unit starts in {@link #region()}. */
    public long offset() {
        return offset;
    }

    public int size() {
        return size;
    }

    /** The unit's bytes for local access. */
    public MemorySegment segment() {
        return segment;
    }

    /**
     * Gives the unit back, tagged with the last operation that reads from it: it is reused once
     * {@code link.isComplete(ticket)}.
     *
     * @throws IllegalStateException if the unit is not currently handed out
     */
    public void release(Link link, long ticket) {
        if (outstanding <= 0) {
            throw new IllegalStateException("unit " + id + " (" + size + " bytes at offset " + offset + " of " + region
                    + ") released but not handed out");
        }
        tag(link, ticket);
        outstanding--;
    }

    /** Gives the unit back without a pending operation (it was used locally only, or every operation completed). */
    public void release() {
        if (outstanding <= 0) {
            throw new IllegalStateException("unit " + id + " (" + size + " bytes at offset " + offset + " of " + region
                    + ") released but not handed out");
        }
        outstanding--;
    }

    /**
     * Records that {@code ticket} on {@code link} reads from the unit. Tickets grow per link, so on the same link the
     * later ticket covers the earlier; a tag on another link is waited out first (bounded by that link's liveness),
     * since a unit keeps one tag: the latency-friendly use is one ring per (thread, link).
     */
    void tag(Link link, long ticket) {
        Link previous = tagLink;
        if (previous == link) {
            if (ticket > tagTicket) {
                tagTicket = ticket;
            }
            return;
        }
        if (previous != null && !previous.isComplete(tagTicket)) {
            previous.awaitCompletion(tagTicket);
        }
        tagLink = link;
        tagTicket = ticket;
    }

    /** True if no one holds the unit and its tag has completed (clearing the tag, so the check stays cheap). */
    boolean reusable() {
        if (outstanding != 0) {
            return false;
        }
        Link link = tagLink;
        if (link == null) {
            return true;
        }
        if (!link.isComplete(tagTicket)) { // RDMA: polls the CQ and requests a flush if no signaled op covers it
            return false;
        }
        tagLink = null;
        return true;
    }

    /** The link whose pending operation holds the unit, or null. */
    Link pendingLink() {
        return tagLink;
    }

    long pendingTicket() {
        return tagTicket;
    }

    @Override
    public String toString() {
        return "Unit[" + id + ", " + size + " bytes at " + offset + " of " + region + "]";
    }
}
