package io.fabricrpc.transport.rdma.firehose;

import java.util.concurrent.atomic.LongAdder;

/**
 * The statistics of a {@link FirehoseCache}, in buckets. Any pinning or releasing thread adds to them, with or without
 * the table lock; readers get a recent sum, not a snapshot. Adders, not atomics: pinning threads on the lock-free hit
 * path must not contend on a statistic.
 */
final class CacheCounters {
    /** Buckets found registered (in use or victim) by a pin. */
    final LongAdder hits = new LongAdder();
    /** Of {@link #hits}, the ones that took a bucket off the victim FIFO. */
    final LongAdder victimHits = new LongAdder();
    /** Buckets a pin had to register. */
    final LongAdder misses = new LongAdder();
    /** Victim buckets deregistered. */
    final LongAdder evictions = new LongAdder();
}
