package io.fabricrpc.transport.rdma.firehose;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A pin of one segment in a {@link FirehoseCache}: the segment stays registered until {@link FirehoseCache#release}.
 * The segment may span several buckets, each with its own registration: bucket {@code i} covers
 * {@code [bucketAddress(i), bucketAddress(i) + bucketSize)}; {@link #bucketIndexOf} finds the bucket of a byte.
 * Immutable apart from its released flag; safe to pass between threads (released once, by any thread).
 *
 * @param <R> the registration type (for RDMA a {@link io.fabricrpc.api.LocalRegion} per bucket)
 */
public final class FirehoseHandle<R> {
    private static final VarHandle RELEASED;

    static {
        try {
            RELEASED = MethodHandles.lookup().findVarHandle(FirehoseHandle.class, "released", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final FirehoseCache<R> owner;
    private final MemorySegment segment;
    /** The bucket of a one-bucket pin (the common case: no array to allocate on a hit), else null. */
    private final Bucket<R> only;
    /** The buckets of a pin spanning several, else null. */
    private final Bucket<R>[] buckets;
    @SuppressWarnings("unused") // through RELEASED
    private volatile int released;

    FirehoseHandle(FirehoseCache<R> owner, MemorySegment segment, Bucket<R>[] buckets) {
        this.owner = owner;
        this.segment = segment;
        this.only = buckets.length == 1 ? buckets[0] : null;
        this.buckets = buckets.length == 1 ? null : buckets;
    }

    FirehoseHandle(FirehoseCache<R> owner, MemorySegment segment, Bucket<R> only) {
        this.owner = owner;
        this.segment = segment;
        this.only = only;
        this.buckets = null;
    }

    FirehoseCache<R> owner() {
        return owner;
    }

    Bucket<R> bucket(int i) {
        if (only != null) {
            java.util.Objects.checkIndex(i, 1);
            return only;
        }
        return buckets[i];
    }

    /** True once: the first release wins (a double release is the caller's error, reported by the cache). */
    boolean markReleased() {
        return RELEASED.compareAndSet(this, 0, 1);
    }

    public boolean isReleased() {
        return released != 0;
    }

    /** The pinned segment. */
    public MemorySegment segment() {
        return segment;
    }

    public int bucketCount() {
        return only != null ? 1 : buckets.length;
    }

    /** Registration of bucket {@code i} (published with the bucket's READY state before the pin returned). */
    public R registration(int i) {
        return bucket(i).registration;
    }

    /** Virtual address where bucket {@code i} (and its registration) starts. */
    public long bucketAddress(int i) {
        return bucket(i).address;
    }

    /** Which bucket holds the byte at {@code segmentOffset} of the segment. */
    public int bucketIndexOf(long segmentOffset) {
        if (segmentOffset < 0 || segmentOffset >= segment.byteSize()) {
            throw new IndexOutOfBoundsException("offset " + segmentOffset + " outside the pinned segment of "
                    + segment.byteSize() + " bytes");
        }
        long bucketSize = owner.config().bucketSize();
        return (int) (((segment.address() + segmentOffset) / bucketSize) - (segment.address() / bucketSize));
    }

    @Override
    public String toString() {
        return "FirehoseHandle[0x" + Long.toHexString(segment.address()) + ", " + segment.byteSize() + " bytes, "
                + bucketCount() + " buckets" + (isReleased() ? ", released" : "") + "]";
    }
}
