package io.fabricrpc.transport.rdma.firehose;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One aligned bucket of a {@link FirehoseCache}: the unit of registration and reference counting. {@code refs} is
 * {@code > 0} in use, {@code 0} victim, {@code -1} dead (removed from the table, being deregistered); any thread
 * moves it between positive values by compare-and-set, but {@code 0 <-> 1} and {@code -1} only under the cache's table
 * lock. {@code state} leaves {@code REGISTERING} once, written by the thread that registers the bucket; the volatile
 * store publishes {@code registration} or {@code failure}. The FIFO links belong to {@link Victims}, under the lock.
 *
 * @param <R> the registration type of the {@link Registrar}
 */
final class Bucket<R> {
    static final int REGISTERING = 0;
    static final int READY = 1;
    static final int FAILED = 2;

    final long index;
    final long address;
    final AtomicInteger refs;
    volatile int state = REGISTERING;
    R registration; // written before the volatile store of READY, read after a volatile load of READY
    RuntimeException failure; // likewise before FAILED
    Bucket<R> older; // victim FIFO links, guarded by the table lock
    Bucket<R> newer;

    Bucket(long index, long address, int refs) {
        this.index = index;
        this.address = address;
        this.refs = new AtomicInteger(refs);
    }

    /** Compare-and-set increment of a count that is already {@code >= 1}; false if it is 0 (victim) or dead. */
    boolean refInUse() {
        while (true) {
            int r = refs.get();
            if (r < 1) {
                return false;
            }
            if (refs.compareAndSet(r, r + 1)) {
                return true;
            }
        }
    }

    /** Appends to a list made on first use: most pins and releases have nothing to collect, so allocate nothing. */
    static <T> List<T> add(List<T> list, T item) {
        List<T> out = list == null ? new ArrayList<>(2) : list;
        out.add(item);
        return out;
    }
}
