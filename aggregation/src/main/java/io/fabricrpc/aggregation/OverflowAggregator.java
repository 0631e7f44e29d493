package io.fabricrpc.aggregation;

import io.fabricrpc.messaging.ChunkLayout;
import io.fabricrpc.messaging.DrainClaim;
import io.fabricrpc.api.MessagingException;
import io.fabricrpc.messaging.Messenger;
import io.fabricrpc.messaging.RecordChannel;
import io.fabricrpc.messaging.RecordWriter;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.transport.Transport;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.function.Consumer;

/**
 * OVERFLOW mode: calls go straight through the messenger (whose policy is FAIL, so it never blocks) while it has
 * room; when every chunk up to cMax is full, calls are serialized as framed records into a local region the
 * transport can send from (the "exceeding" calls) and written from there, in order and without a copy, once room
 * returns. While exceeding calls wait, new calls queue behind them, so per-sender FIFO holds across the boundary.
 *
 * <pre>
 * exceeding region: | framed record | framed record | ... |   head .. tail = waiting calls, oldest first
 *                    (same framing as a chunk: see ChunkLayout)
 * </pre>
 */
final class OverflowAggregator extends Aggregator {
    /** Who drains the exceeding calls into the messenger: the sender or the agent (model/waiting_calls_drain.pml). */
    private final DrainClaim claim = new DrainClaim();
    /** Names this channel in a claim wait that fails; made once, not per wait. */
    private final java.util.function.Supplier<String> name = this::toString;
    private final Transport transport;
    private LocalRegion exceeding;
    private long head;
    private long tail;
    private long exceedingRecords;
    private volatile long oldestExceeding;
    /** Sender-confined: false only when, at the sender's last look holding the claim, no exceeding call waited. */
    private boolean exceedingMayWait;
    /** Where the caller keeps {@link #direct()} (see RecordChannel#bindDirect). */
    private Consumer<RecordChannel> directHolder = messenger -> { };
    /** A call blocked at the limit, or a flush, that waits this long for room fails: the peer is alive but stuck. */
    private static final long STUCK_NANOS = 30_000_000_000L;
    /** Waits for the receiver holding the claim (BLOCK at the limit, flush): spins, yields, then parks 1 to 100 us. */
    private final IdleStrategy roomWait = new BackoffIdleStrategy(64, 16, 1_000, 100_000);

    OverflowAggregator(Messenger messenger, AggregationConfig config, Transport transport, AggregationDuty duty) {
        super(messenger, config, duty);
        this.transport = transport;
    }

    @Override
    public boolean send(int tag, RecordWriter writer) {
        // Lock-free while no call waits: only this thread creates exceeding calls, and the agent touches the
        // messenger only to drain them, so it leaves the messenger alone until this thread parks a call (and
        // hands over everything it wrote through the claim's release).
        if (!exceedingMayWait && messenger.send(tag, writer)) {
            return true;
        }
        return sendBehindExceeding(tag, writer);
    }

    /** The direct path of {@link #send}, for callers that inline the messenger's send themselves. */
    @Override
    public RecordChannel direct() {
        return exceedingMayWait ? null : messenger;
    }

    @Override
    public void bindDirect(Consumer<RecordChannel> holder) {
        directHolder = holder;
    }

    /** Holding the claim: drains waiting calls first, then sends directly if room is left, else parks the call. */
    private boolean sendBehindExceeding(int tag, RecordWriter writer) {
        checkPoisoned(); // a parked call would never run (parked ones count among those not run)
        claim.claim(name);
        try {
            if (tail == head || drain()) {
                if (messenger.send(tag, writer)) {
                    return true;
                }
            }
            return park(tag, writer);
        } finally {
            boolean mayWait = tail != head; // read holding the claim: sees the agent's last drain
            if (mayWait != exceedingMayWait) {
                exceedingMayWait = mayWait;
                directHolder.accept(direct()); // this thread's next call reads it
            }
            claim.release();
        }
    }

    /** Keeps a call that the messenger cannot take now, behind the ones already waiting. */
    private boolean park(int tag, RecordWriter writer) {
        long maxRecord = messenger.maxPayload();
        long start = System.nanoTime();
        roomWait.reset();
        while (true) {
            ensureRoom(ChunkLayout.RECORD_HEADER_LENGTH + maxRecord);
            long room = Math.min(maxRecord, config.exceedingLimit() - (tail - head) - ChunkLayout.RECORD_HEADER_LENGTH);
            long length = room > 0 ? writer.write(exceeding.segment(), tail + ChunkLayout.RECORD_HEADER_LENGTH, room) : -1;
            if (length > 0) {
                exceeding.segment().set(ValueLayout.JAVA_INT_UNALIGNED, tail, ChunkLayout.header(length, tag));
                if (tail == head) {
                    oldestExceeding = System.nanoTime();
                    noteUnsent();
                }
                tail += ChunkLayout.recordSize(length);
                exceedingRecords++;
                return true;
            }
            if (length == 0) {
                throw new MessagingException("record writer reported 0 bytes");
            }
            if (room >= maxRecord) {
                throw new MessagingException("call of more than " + maxRecord + " bytes does not fit an empty chunk of "
                        + messenger + "; raise chunkSize");
            }
            // The exceeding calls fill their limit.
            if (config.onLimit() == AggregationConfig.LimitPolicy.FAIL) {
                return false;
            }
            long waiting = tail - head;
            drain();
            if (tail - head < waiting) {
                roomWait.reset(); // room returned
                continue;
            }
            awaitReceiver(start, () -> "exceeding calls of " + messenger + " stayed at their limit of "
                    + config.exceedingLimit() + " bytes (" + (tail - head) + " waiting)");
        }
    }

    /** One step of a wait for the receiver: runs incoming calls (it may wait on us), backs off, fails once stuck. */
    private void awaitReceiver(long start, java.util.function.Supplier<String> stuck) {
        messenger.link().checkAlive();
        messenger.helpWhileWaiting();
        if (System.nanoTime() - start > STUCK_NANOS) {
            throw new MessagingException(stuck.get() + " for " + STUCK_NANOS / 1_000_000_000 + " s: the destination "
                    + "consumes nothing");
        }
        roomWait.idle(); // the receiver sets the pace now: back off as the messenger's own RETRY wait does
    }

    /** Writes waiting calls into the messenger's chunks, oldest first, while there is room. True when none wait. */
    private boolean drain() {
        while (tail > head) {
            long before = messenger.recordsSent();
            long taken = messenger.writeFramed(exceeding, head, tail - head);
            if (taken == 0) {
                return false;
            }
            batches++; // claim holder: one write of waiting calls
            exceedingRecords -= messenger.recordsSent() - before;
            head += taken;
        }
        messenger.link().awaitCompletion(messenger.lastTicket()); // the region is refilled from offset 0 next
        head = 0;
        tail = 0;
        return true;
    }

    private void ensureRoom(long bytes) {
        if (exceeding == null) {
            exceeding = transport.allocate(Math.max(64 * 1024, Math.min(config.exceedingLimit(), 1 << 20) + bytes),
                    RemoteAccess.NONE);
        }
        if (exceeding.length() - tail >= bytes) {
            return;
        }
        long live = tail - head;
        messenger.link().awaitCompletion(messenger.lastTicket()); // no write may still be reading the old bytes
        LocalRegion target = exceeding;
        if (exceeding.length() < live + bytes) {
            target = transport.allocate(Math.max(2 * exceeding.length(), live + bytes), RemoteAccess.NONE);
        }
        MemorySegment.copy(exceeding.segment(), head, target.segment(), 0, live);
        if (target != exceeding) {
            exceeding.close();
            exceeding = target;
        }
        head = 0;
        tail = live;
    }

    /** Takes the aggregator if its sender does not hold it, and drains exceeding calls older than maxDelay. */
    @Override
    boolean pushOutOverdue(long now) {
        if (!claim.tryClaim()) {
            return true; // its sender holds it, so its sender will push it out, or leave it to us later
        }
        try {
            if (tail > head && now - oldestExceeding >= maxDelayNanos) {
                pushOuts++; // claim holder (the agent)
                drain();
            }
            if (tail > head) {
                return true;
            }
            clearUnsentMayWait(); // held: its sender cannot be parking a call meanwhile
            return false;
        } finally {
            claim.release();
        }
    }

    @Override
    public long recordsSent() {
        return messenger.recordsSent() + exceedingRecords;
    }

    @Override
    public void flush() {
        claim.claim(name);
        try {
            flushes++; // claim holder (the sender)
            long start = System.nanoTime();
            roomWait.reset();
            while (!drain()) {
                awaitReceiver(start, () -> "flush of " + this + ": " + (tail - head) + " bytes of exceeding calls waited");
            }
            messenger.flush();
        } finally {
            claim.release();
        }
    }

    /** The sender, waiting on this channel: exceeding calls that fit go out now, the waiting flag too. */
    @Override
    public void publishBuffered() {
        if (exceedingMayWait) {
            claim.claim(name);
            try {
                drain();
            } finally {
                claim.release();
            }
        }
        messenger.publishDeferred();
    }

    @Override
    public long bufferedBytes() {
        return tail - head + messenger.bufferedBytes(); // the direct calls' waiting flag counts too
    }

    @Override
    public void close() {
        super.close();
        if (exceeding != null) {
            exceeding.close();
        }
    }

    @Override
    public String toString() {
        return "OverflowAggregator[" + messenger + ", exceeding " + (tail - head) + " B]";
    }
}
