package io.fabricrpc.invocation;

import io.fabricrpc.messaging.RecordChannel;

/**
 * A synchronizer target on one channel: SENT waits for a transport ticket to complete, CONSUMED for the
 * receiver's pushed consumed-record count to reach the call's sequence number. One of each per channel.
 */
final class ChannelTarget implements SyncTarget {
    private final FabricRuntime runtime;
    private final RecordChannel channel;
    private final int destinationRank;
    private final boolean consumed;

    ChannelTarget(FabricRuntime runtime, RecordChannel channel, int destinationRank, boolean consumed) {
        this.runtime = runtime;
        this.channel = channel;
        this.destinationRank = destinationRank;
        this.consumed = consumed;
    }

    @Override
    public boolean reached(long mark) {
        return consumed ? channel.consumedRecords() >= mark : channel.link().isComplete(mark);
    }

    @Override
    public void checkAlive() {
        runtime.checkAlive(destinationRank);
    }

    @Override
    public void helpWhileWaiting() {
        runtime.help();
    }

    @Override
    public String describe(long mark) {
        return (consumed ? "call " + mark + " on " : "write " + mark + " of ") + channel;
    }
}
