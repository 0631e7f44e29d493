package io.fabricrpc.invocation;

import io.fabricrpc.api.SyncTarget;

import io.fabricrpc.api.ThreadId;
import io.fabricrpc.api.Synchronizer;
import io.fabricrpc.messaging.RecordChannel;
import io.fabricrpc.api.RemoteInvocationException;

/**
 * A synchronizer target on one channel: CONSUMED waits for the receiver's pushed consumed-record count to reach the
 * call's sequence number; SENT for the channel to hold nothing unwritten and its latest write (at least the ticket
 * taken at the call) to complete. The waiting sender pushes what the channel buffers (a batch) meanwhile, so neither
 * depends on a helper thread. One of each per channel, used by the channel's sending thread only.
 *
 * <p>Failures: a poisoned channel fails both (SENT at once: its mark is a write ticket, which cannot tell calls before
 * the poisoning point from calls after it; CONSUMED while its mark is not reached). CONSUMED reports
 * each failure the receiver pushed (a CONSUMED call whose function threw) once, to the first wait that sees it: with
 * one synchronizer per channel at a time, exactly its own calls' failures.
 */
final class ChannelTarget implements SyncTarget {
    private final FabricRuntime runtime;
    private final RecordChannel channel;
    private final int destinationRank;
    private final boolean consumed;
    /** Remote failures of CONSUMED calls already reported by a wait. */
    private long reportedFailures;

    ChannelTarget(FabricRuntime runtime, RecordChannel channel, int destinationRank, boolean consumed) {
        this.runtime = runtime;
        this.channel = channel;
        this.destinationRank = destinationRank;
        this.consumed = consumed;
    }

    @Override
    public boolean reached(long mark) {
        if (consumed) {
            if (channel.consumedRecords() < mark) {
                channel.checkPoisoned(); // calls up to the mark would never run
                return false;
            }
            long failures = channel.failedRecords(); // pushed before the consumed count just read
            if (failures > reportedFailures) {
                throw remoteFailures(failures);
            }
            return true;
        }
        channel.checkPoisoned(); // calls accepted after the poisoning point are not sent, whatever their writes did
        // A batched call has no ticket of its own until its batch is written: nothing buffered, then the latest write.
        return channel.bufferedBytes() == 0 && channel.link().isComplete(Math.max(mark, channel.lastTicket()));
    }

    private Synchronizer.RemoteCallsFailedException remoteFailures(long failures) {
        long count = failures - reportedFailures;
        reportedFailures = failures;
        String text = channel.latestFailure();
        int split = text.indexOf('\n');
        RemoteInvocationException remote = new RemoteInvocationException(split < 0 ? text : text.substring(0, split),
                split < 0 ? "" : text.substring(split + 1));
        ThreadId to = ThreadId.fromLong(channel.destination());
        return new Synchronizer.RemoteCallsFailedException(count + " call" + (count == 1 ? "" : "s") + " to worker "
                + to.rank() + "/" + to.threadIndex() + " counted by a CONSUMED synchronizer threw there (run up to call "
                + channel.consumedRecords() + "); the latest: " + remote.getMessage(), remote);
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
