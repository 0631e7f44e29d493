package io.fabricrpc.invocation;

import io.fabricrpc.api.SyncTarget;

import io.fabricrpc.api.BroadcastIncompleteException;
import io.fabricrpc.transport.CounterSlot;
import io.fabricrpc.api.LocalRegion;

import java.util.ArrayList;
import java.util.List;

/**
 * A broadcast's consumption: every live worker's counter in the root's ack region has reached the broadcast's
 * sequence. Workers of failed ranks are not waited for; a live worker whose path in the tree passes through a failed
 * rank and that has not run the broadcast {@link #GRACE_NANOS} after that failure is known is reported, by name, in a
 * {@link BroadcastIncompleteException}. Owned by the broadcasting thread.
 *
 * <pre>
 * Ack region (the broadcasting thread's memory, RemoteAccess.WRITE), one {@link CounterSlot} per worker thread:
 *  0                  24                 48               24 x threads
 *  +------------------+------------------+-- ... --------+
 *  | worker 0         | worker 1         |                |
 *  +------------------+------------------+-- ... --------+
 *  worker i's slot: the sequence of the latest acknowledged broadcast from this thread that worker i has run,
 *  published by worker i alone after the run
 * </pre>
 */
final class AckTarget implements SyncTarget {
    /** How long a worker below a failed rank may take to confirm before it is reported as not reached. */
    static final long GRACE_NANOS = 1_000_000_000L;

    private final FabricRuntime runtime;
    private final LocalRegion acks;
    private final int threads;
    private final int root;
    private final long[] known;
    private int checkedUpTo;
    private long lastMark;
    private long incompleteSince;

    AckTarget(FabricRuntime runtime, LocalRegion acks, int threads, int root) {
        this.runtime = runtime;
        this.acks = acks;
        this.threads = threads;
        this.root = root;
        this.known = new long[threads];
    }

    static long regionLength(int threads) {
        return (long) CounterSlot.LENGTH * threads;
    }

    static long slotOffset(int worker) {
        return (long) CounterSlot.LENGTH * worker;
    }

    @Override
    public boolean reached(long mark) {
        lastMark = mark;
        for (int i = checkedUpTo; i < threads; i++) {
            if (!ran(i, mark) && !runtime.isGone(rankOf(i))) {
                checkedUpTo = i;
                return false;
            }
        }
        checkedUpTo = 0;
        incompleteSince = 0;
        return true;
    }

    private boolean ran(int worker, long mark) {
        known[worker] = CounterSlot.read(acks.segment(), slotOffset(worker), known[worker]); // worker publishes after its run
        return known[worker] >= mark;
    }

    /** Fails once live workers cut off by a failed rank have not confirmed within the grace; else returns. */
    @Override
    public void checkAlive() {
        List<String> missed = null;
        int failed = -1;
        for (int i = 0; i < threads; i++) {
            if (ran(i, lastMark) || runtime.isGone(rankOf(i))) {
                continue;
            }
            int cut = failedAncestorRank(i);
            if (cut >= 0) {
                failed = cut;
                if (missed == null) {
                    missed = new ArrayList<>();
                }
                missed.add(name(i));
            }
        }
        if (missed == null) {
            incompleteSince = 0;
            return;
        }
        long now = System.nanoTime();
        if (incompleteSince == 0) {
            incompleteSince = now;
        } else if (now - incompleteSince > GRACE_NANOS) {
            throw new BroadcastIncompleteException(failed, lastMark, name(root), missed, GRACE_NANOS / 1_000_000);
        }
    }

    /** The rank of a failed worker on the tree path from the root to {@code worker}, or -1. */
    private int failedAncestorRank(int worker) {
        int target = Math.floorMod(worker - root, threads);
        int relative = 0;
        int span = threads;
        while (span > 1 && relative != target) {
            int half = (span + 1) / 2;
            if (target >= relative + half) {
                relative += half;
                span -= half;
                if (relative != target) {
                    int rank = rankOf((root + relative) % threads);
                    if (runtime.isGone(rank)) {
                        return rank;
                    }
                }
            } else {
                span = half;
            }
        }
        return -1;
    }

    private int rankOf(int worker) {
        return worker / runtime.threadsPerProcess();
    }

    private String name(int worker) {
        return rankOf(worker) + "/" + worker % runtime.threadsPerProcess();
    }

    @Override
    public void helpWhileWaiting() {
        runtime.help();
    }

    @Override
    public String describe(long mark) {
        return "broadcast " + mark + " not yet run by worker " + name(checkedUpTo);
    }
}
