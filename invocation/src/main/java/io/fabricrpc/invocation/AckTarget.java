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
 * {@link BroadcastIncompleteException}. A broadcast whose function threw at some workers fails the wait that sees
 * it, once, with a {@link io.fabricrpc.api.Synchronizer.RemoteCallsFailedException} naming them. Owned by the
 * broadcasting thread.
 *
 * <pre>
 * Ack region (the broadcasting thread's memory, RemoteAccess.WRITE), two {@link CounterSlot}s per worker thread:
 *  0                  24                  24 x threads       24 x (threads + 1)      48 x threads
 *  +------------------+-- ... -----------+------------------+-- ... --------------+
 *  | ran: worker 0    |  ran: worker i   | threw: worker 0  |  threw: worker i    |
 *  +------------------+-- ... -----------+------------------+-- ... --------------+
 *  ran i:   the sequence of the latest acknowledged broadcast from this thread that worker i has run
 *  threw i: the sequence of the latest such broadcast whose function threw at worker i (0: none); published
 *           before ran i. Both written by worker i alone, after the run.
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
    /** Per worker: the latest failed sequence read, and the latest one already reported. */
    private final long[] threw;
    private final long[] reportedThrew;
    private int checkedUpTo;
    private long lastMark;
    private long incompleteSince;

    AckTarget(FabricRuntime runtime, LocalRegion acks, int threads, int root) {
        this.runtime = runtime;
        this.acks = acks;
        this.threads = threads;
        this.root = root;
        this.known = new long[threads];
        this.threw = new long[threads];
        this.reportedThrew = new long[threads];
    }

    static long regionLength(int threads) {
        return 2L * CounterSlot.LENGTH * threads;
    }

    static long slotOffset(int worker) {
        return (long) CounterSlot.LENGTH * worker;
    }

    /** Where worker {@code worker} publishes the latest sequence that threw there, in a job of {@code threads}. */
    static long failedSlotOffset(int threads, int worker) {
        return (long) CounterSlot.LENGTH * (threads + worker);
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
        reportFailures(mark);
        return true;
    }

    /** Throws, once per failure, if the function threw at any worker for a broadcast up to {@code mark}. */
    private void reportFailures(long mark) {
        List<String> failed = null;
        long latest = 0;
        for (int i = 0; i < threads; i++) {
            // read after ran(i): the failed slot is published before the ran slot
            threw[i] = CounterSlot.read(acks.segment(), failedSlotOffset(threads, i), threw[i]);
            if (threw[i] > reportedThrew[i]) {
                reportedThrew[i] = threw[i];
                latest = Math.max(latest, threw[i]);
                if (failed == null) {
                    failed = new ArrayList<>();
                }
                failed.add(name(i));
            }
        }
        if (failed != null) {
            throw new io.fabricrpc.api.Synchronizer.RemoteCallsFailedException("broadcast from worker " + name(root)
                    + " threw at " + failed.size() + " worker" + (failed.size() == 1 ? "" : "s") + " " + failed
                    + " (latest failed broadcast " + latest + ", waited for up to " + mark + "); each worker's"
                    + " onError listener got the exception", null);
        }
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
