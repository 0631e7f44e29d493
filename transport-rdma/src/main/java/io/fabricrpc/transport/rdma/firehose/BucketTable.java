package io.fabricrpc.transport.rdma.firehose;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The firehose cache's bucket table: bucket index (a primitive {@code long}, never boxed) to {@link Bucket}.
 * Open addressing with linear probing over an array of bucket references; a removed entry leaves a tombstone, so a
 * probe sequence is never cut short under a concurrent reader; the table is rebuilt (live entries only) when
 * entries plus tombstones pass half the capacity.
 *
 * <p>Concurrency contract: {@link #get} is lock-free and may run at any time; {@link #put} and {@link #remove} run
 * only under the cache's table lock, so there is one writer at a time. A reader may miss an entry being inserted or
 * see one being removed (or read a replaced array): the cache treats every lock-free result as a hint, confirmed by
 * the bucket's own state and count, and falls back to the locked path. It never sees a wrong key, because a slot
 * holds a whole bucket whose {@code index} is final.
 */
final class BucketTable<R> {
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(Bucket[].class);
    private static final Bucket<?> TOMBSTONE = new Bucket<>(-1, 0, -1);

    /** Replaced whole on a rebuild; the volatile read and write publish the copied slots with it. */
    private volatile Bucket<?>[] slots = new Bucket<?>[64];
    private int live; // guarded by the cache's lock, as are the next two
    private int tombstones;

    /** The bucket with this index, or null; lock-free. */
    @SuppressWarnings("unchecked")
    Bucket<R> get(long index) {
        Bucket<?>[] table = slots;
        int mask = table.length - 1;
        for (int i = home(index, mask), probes = 0; probes <= mask; i = (i + 1) & mask, probes++) {
            // Acquire: a bucket found here was fully built before the writer's release store.
            Bucket<?> b = (Bucket<?>) SLOT.getAcquire(table, i);
            if (b == null) {
                return null;
            }
            if (b != TOMBSTONE && b.index == index) {
                return (Bucket<R>) b;
            }
        }
        return null;
    }

    /** Under the cache's lock: maps the bucket's index to it (replacing any bucket of that index). */
    void put(Bucket<R> bucket) {
        if ((live + tombstones + 1) * 2 > slots.length) {
            rebuild();
        }
        Bucket<?>[] table = slots;
        int mask = table.length - 1;
        int slot = -1;
        boolean replacing = false;
        for (int i = home(bucket.index, mask); ; i = (i + 1) & mask) { // ends: the table is at most half full
            Bucket<?> b = table[i];
            if (b == null) {
                slot = slot < 0 ? i : slot;
                break;
            }
            if (b == TOMBSTONE) {
                slot = slot < 0 ? i : slot;
            } else if (b.index == bucket.index) {
                slot = i;
                replacing = true;
                break;
            }
        }
        if (!replacing) {
            if (table[slot] == TOMBSTONE) {
                tombstones--;
            }
            live++;
        }
        // Release: the bucket's fields, written before, are visible to a reader that finds it.
        SLOT.setRelease(table, slot, bucket);
    }

    /** Under the cache's lock: removes the mapping if it is this very bucket. */
    void remove(Bucket<R> bucket) {
        Bucket<?>[] table = slots;
        int mask = table.length - 1;
        for (int i = home(bucket.index, mask); ; i = (i + 1) & mask) {
            Bucket<?> b = table[i];
            if (b == null) {
                return;
            }
            if (b == bucket) {
                // A tombstone, not null: readers probing past this slot must keep going.
                SLOT.setRelease(table, i, TOMBSTONE);
                live--;
                tombstones++;
                return;
            }
        }
    }

    /** Entries now (under the cache's lock; tests). */
    int size() {
        return live;
    }

    private void rebuild() {
        Bucket<?>[] old = slots;
        int capacity = old.length;
        while ((live + 1) * 4 > capacity) { // at most a quarter full after the rebuild
            capacity <<= 1;
        }
        Bucket<?>[] table = new Bucket<?>[capacity];
        int mask = capacity - 1;
        for (Bucket<?> b : old) {
            if (b != null && b != TOMBSTONE) {
                int i = home(b.index, mask);
                while (table[i] != null) {
                    i = (i + 1) & mask;
                }
                table[i] = b;
            }
        }
        tombstones = 0;
        slots = table; // volatile: publishes the filled array; readers of the old one see a consistent snapshot
    }

    private static int home(long index, int mask) {
        return (int) ((index * 0x9E3779B97F4A7C15L) >>> 40) & mask; // bucket indexes are consecutive: spread them
    }
}
