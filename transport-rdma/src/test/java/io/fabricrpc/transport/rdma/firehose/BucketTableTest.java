package io.fabricrpc.transport.rdma.firehose;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The firehose's primitive-keyed bucket table: map semantics, tombstones, rebuilds, lock-free readers. */
class BucketTableTest {
    private static Bucket<Object> bucket(long index) {
        return new Bucket<>(index, index << 12, 1);
    }

    @Test
    void behavesAsAMapThroughChurnAndRebuilds() {
        BucketTable<Object> table = new BucketTable<>();
        Map<Long, Bucket<Object>> model = new HashMap<>();
        SplittableRandom random = new SplittableRandom(7);
        for (int step = 0; step < 200_000; step++) {
            long index = random.nextLong(3_000); // consecutive-ish indexes, as buckets of one buffer are
            Bucket<Object> present = model.get(index);
            if (present != null && random.nextBoolean()) {
                table.remove(present);
                model.remove(index);
            } else if (present == null) {
                Bucket<Object> b = bucket(index);
                table.put(b);
                model.put(index, b);
            } else {
                table.remove(bucket(index)); // another bucket of the same index: not removed
            }
            if (step % 1000 == 0) {
                assertEquals(model.size(), table.size(), "entries at step " + step);
                for (long i = 0; i < 3_000; i++) {
                    assertSame(model.get(i), table.get(i), "bucket " + i + " at step " + step);
                }
            }
        }
        Bucket<Object> replacement = bucket(5);
        table.put(replacement);
        assertSame(replacement, table.get(5), "put replaces the bucket of an index");
        assertNull(table.get(-7));
    }

    @Test
    void lockFreeReadersNeverSeeAnotherKeyOrLoseAStableEntry() throws Exception {
        BucketTable<Object> table = new BucketTable<>();
        int stable = 64;
        Bucket<Object>[] kept = new Bucket[stable];
        for (int i = 0; i < stable; i++) {
            kept[i] = bucket(i * 1_000L);
            table.put(kept[i]);
        }
        AtomicBoolean stop = new AtomicBoolean();
        ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
        Thread[] readers = new Thread[3];
        for (int r = 0; r < readers.length; r++) {
            int seed = r;
            readers[r] = Thread.ofPlatform().start(() -> {
                SplittableRandom random = new SplittableRandom(seed);
                while (!stop.get()) {
                    long index = random.nextLong(64_000);
                    Bucket<Object> b = table.get(index);
                    if (b != null && b.index != index) {
                        problems.add("asked " + index + ", got " + b.index);
                    }
                    int k = random.nextInt(stable);
                    if (table.get(k * 1_000L) != kept[k]) {
                        problems.add("stable bucket " + k * 1_000L + " not found during churn");
                    }
                }
            });
        }
        // One writer (the cache's lock holder) churns other keys, forcing tombstones and rebuilds.
        SplittableRandom random = new SplittableRandom(99);
        Bucket<Object>[] churn = new Bucket[5_000];
        long deadline = System.nanoTime() + 1_500_000_000L;
        while (System.nanoTime() < deadline && problems.isEmpty()) {
            int slot = random.nextInt(churn.length);
            if (churn[slot] != null) {
                table.remove(churn[slot]);
                churn[slot] = null;
            } else {
                long index = 1 + slot * 1_000L + random.nextInt(999); // never a stable index
                churn[slot] = bucket(index);
                table.put(churn[slot]);
            }
        }
        stop.set(true);
        for (Thread reader : readers) {
            reader.join();
        }
        assertTrue(problems.isEmpty(), problems.peek());
    }
}
