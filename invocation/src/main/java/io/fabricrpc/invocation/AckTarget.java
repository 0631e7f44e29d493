package io.fabricrpc.invocation;

import io.fabricrpc.transport.LocalRegion;

import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/** A broadcast's consumption: every worker's word in the root's ack region has reached the broadcast's sequence. */
final class AckTarget implements SyncTarget {
    private static final VarHandle WORD = ValueLayout.JAVA_LONG.varHandle();
    private final FabricRuntime runtime;
    private final LocalRegion acks;
    private final int threads;
    private int checkedUpTo;

    AckTarget(FabricRuntime runtime, LocalRegion acks, int threads) {
        this.runtime = runtime;
        this.acks = acks;
        this.threads = threads;
    }

    @Override
    public boolean reached(long mark) {
        for (int i = checkedUpTo; i < threads; i++) {
            if ((long) WORD.getAcquire(acks.segment(), 8L * i) < mark) { // written by worker i, ordered after its run
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
