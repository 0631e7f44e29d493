package io.fabricrpc.messaging;

import io.fabricrpc.counters.CounterSource;
import io.fabricrpc.counters.CounterTypes;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The receiving side's count of one source: records its destination thread has run from that sender, read on the
 * counters publisher's thread by an opaque load of the inbox's own count (nothing is added per call).
 */
final class InboxCounters implements CounterSource {
    private static final VarHandle CONSUMED_RECORDS;

    static {
        try {
            CONSUMED_RECORDS = MethodHandles.lookup().findVarHandle(SenderInbox.class, "consumedRecords", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final SenderInbox inbox;
    private final String label;

    InboxCounters(SenderInbox inbox, long sender, long destination) {
        this.inbox = inbox;
        this.label = "calls run " + CounterTypes.channel(sender, destination);
    }

    @Override
    public int counterCount() {
        return 1;
    }

    @Override
    public String label(int index) {
        return label;
    }

    @Override
    public int typeId(int index) {
        return CounterTypes.CALLS_RUN;
    }

    @Override
    public long loValue(int index) {
        return (long) CONSUMED_RECORDS.getOpaque(inbox);
    }
}
