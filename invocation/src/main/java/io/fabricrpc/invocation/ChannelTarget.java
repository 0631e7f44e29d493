package io.fabricrpc.invocation;

import io.fabricrpc.api.SyncTarget;

import io.fabricrpc.api.ThreadId;
import io.fabricrpc.messaging.RecordChannel;

/**
 * A synchronizer target on one channel: CONSUMED waits for the receiver's pushed consumed-record count to reach the
 * call's sequence number; SENT for the channel to hold nothing unwritten and its latest write (at least the ticket
 * taken at the call) to complete. The waiting sender pushes what the channel buffers (a batch) meanwhile, so neither
 * depends on a helper thread. One of each per channel.
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
        if (consumed) {
            return channel.consumedRecords() >= mark;
        }
        // A batched call has no ticket of its own until its batch is written: nothing buffered, then the latest write.
        return channel.bufferedBytes() == 0 && channel.link().isComplete(Math.max(mark, channel.lastTicket()));
    }

    @Override
    public void checkAlive() {
        runtime.checkAlive(destinationRank);
    }

    @Override
    public void pushBuffered() {
        channel.publishBuffered(); // the caller's own batch: waiting for it must not wait for the agent
    }

    @Override
    public void helpWhileWaiting() {
        runtime.help();
    }

    @Override
    public String describe(long mark) {
        ThreadId to = ThreadId.fromLong(channel.destination());
        String where = " to worker " + to.rank() + "/" + to.threadIndex() + " (rank " + to.rank() + ", thread "
                + to.threadIndex() + ")";
        return consumed
                ? "call " + mark + where + ", run there up to call " + channel.consumedRecords() + ", "
                        + channel.bufferedBytes() + " bytes still unsent here"
                : "calls" + where + ": " + channel.bufferedBytes() + " bytes still unsent here, write ticket " + mark;
    }
}
