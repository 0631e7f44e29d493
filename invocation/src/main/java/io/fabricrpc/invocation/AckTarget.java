package io.fabricrpc.invocation;

import io.fabricrpc.api.SyncTarget;

import io.fabricrpc.transport.CounterSlot;
import io.fabricrpc.api.LocalRegion;

/**
 * A broadcast's consumption: every worker's counter in the root's ack region has reached the broadcast's sequence.
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
    private final FabricRuntime runtime;
    private final LocalRegion acks;
    private final int threads;
    private final long[] known;
    private int checkedUpTo;

    AckTarget(FabricRuntime runtime, LocalRegion acks, int threads) {
        this.runtime = runtime;
        this.acks = acks;
        this.threads = threads;
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
        for (int i = checkedUpTo; i < threads; i++) {
            known[i] = CounterSlot.read(acks.segment(), slotOffset(i), known[i]); // worker i publishes after its run
            if (known[i] < mark) {
                checkedUpTo = i;
                return false;
            }
        }
        checkedUpTo = 0;
        return true;
    }

    @Override
    public void checkAlive() {
        for (int rank = 0; rank < runtime.size(); rank++) {
            runtime.checkAlive(rank);
        }
    }

    @Override
    public void helpWhileWaiting() {
        runtime.help();
    }

    @Override
    public String describe(long mark) {
        return "broadcast " + mark + " not yet run by worker " + checkedUpTo;
    }
}
