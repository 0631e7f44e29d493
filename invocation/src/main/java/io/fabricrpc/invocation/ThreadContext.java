package io.fabricrpc.invocation;

import io.fabricrpc.messaging.Messenger;
import io.fabricrpc.messaging.RecordChannel;
import io.fabricrpc.messaging.ReceivingThread;
import io.fabricrpc.messaging.RecordWriter;
import io.fabricrpc.serialization.CallEncoder;
import io.fabricrpc.transport.LocalRegion;

import java.io.Serializable;
import java.lang.foreign.MemorySegment;

/**
 * Per-thread sending state: a messenger and a call encoder per destination thread (Seriema's messengers are
 * per sender thread and destination), reusable record writers, and, for an attached worker, its receiving side.
 * Confined to its thread.
 */
final class ThreadContext {
    final FabricRuntime runtime;
    final long senderId;
    static final int MAX_VIEWS = 16;

    /** The view (0 = plain messengers; others, e.g. aggregators) whose channels the current call uses. */
    int view;
    private final int threads;
    private final RecordChannel[][] channelRows = new RecordChannel[MAX_VIEWS][];
    private final CallEncoder[][] encoderRows = new CallEncoder[MAX_VIEWS][];
    private final MessengerTargets[][] targetRows = new MessengerTargets[MAX_VIEWS][];
    /** View 0's messengers, used directly for broadcast forwarding. */
    final Messenger[] messengers;
    final CallEncoder[] sendEncoders;
    MemorySegment sendStaging;
    /** Where this thread builds its broadcast records, and their encoder (reset for each record). */
    MemorySegment broadcastRecord;
    io.fabricrpc.serialization.CallEncoder broadcastEncoder;
    /**
     * One record writer per nesting level: a send that waits for room runs incoming calls (to avoid deadlock),
     * and those may send too; each level keeps its own half-prepared record.
     */
    private final CallWriter[] writers = new CallWriter[MAX_NESTING];
    private final RawWriter[] raws = new RawWriter[MAX_NESTING];
    static final int MAX_NESTING = 4;
    int nesting;

    /** Set for attached workers (and handler threads standing in for them). */
    ReceivingThread receiving;
    CallReceiver receiver;
    int workerIndex = -1;
    boolean inProcessCalls;

    ReturnSlots.Slot blockingSlot;
    io.fabricrpc.serialization.ResultCodec results;
    long broadcasts;
    LocalRegion ackRegion;
    AckTarget ackTarget;
    /** Publishes this thread's own slot of {@link #ackRegion} when it runs its broadcast as the root. */
    io.fabricrpc.transport.CounterSlot.Writer ownAck;

    ThreadContext(FabricRuntime runtime, long senderId, int threads) {
        this.runtime = runtime;
        this.senderId = senderId;
        this.threads = threads;
        this.messengers = new Messenger[threads];
        this.sendEncoders = new CallEncoder[threads];
    }

    CallWriter writer() {
        CallWriter writer = writers[nesting];
        if (writer == null) {
            writer = new CallWriter();
            writers[nesting] = writer;
        }
        return writer;
    }

    RawWriter raw() {
        RawWriter raw = raws[nesting];
        if (raw == null) {
            raw = new RawWriter();
            raws[nesting] = raw;
        }
        return raw;
    }

    RecordChannel[] channels() {
        RecordChannel[] row = channelRows[view];
        if (row == null) {
            row = new RecordChannel[threads];
            channelRows[view] = row;
            encoderRows[view] = new CallEncoder[threads];
            targetRows[view] = new MessengerTargets[threads];
        }
        return row;
    }

    CallEncoder[] encoders() {
        channels();
        return encoderRows[view];
    }

    MessengerTargets[] targets() {
        channels();
        return targetRows[view];
    }

    /** Every channel of every view, for flush and close. */
    java.util.List<RecordChannel> allChannels() {
        java.util.List<RecordChannel> all = new java.util.ArrayList<>();
        for (RecordChannel[] row : channelRows) {
            if (row != null) {
                for (RecordChannel channel : row) {
                    if (channel != null) {
                        all.add(channel);
                    }
                }
            }
        }
        return all;
    }

    /** The two synchronizer targets of one channel, created once and reused for every call. */
    record MessengerTargets(SyncTarget sent, SyncTarget consumed) {
    }

    /**
     * Writes an invocation record: an optional kind-specific header, the encoded call, an optional trailing
     * buffer. Fields are set before each send (no allocation per call).
     */
    static final class CallWriter implements RecordWriter {
        CallEncoder encoder;
        Serializable function;
        final MemorySegment header = MemorySegment.ofArray(new byte[64]);
        int headerLength;
        MemorySegment trailer;
        long trailerOffset;
        long trailerLength;

        void prepare(CallEncoder encoder, Serializable function) {
            this.encoder = encoder;
            this.function = function;
            this.headerLength = 0;
            this.trailer = null;
            this.trailerLength = 0;
        }

        @Override
        public long write(MemorySegment target, long offset, long limit) {
            long room = limit - headerLength - trailerLength;
            if (room <= 0) {
                return -1;
            }
            int encoded = encoder.encode(function, target, offset + headerLength, offset + headerLength + room);
            if (encoded < 0) {
                return -1;
            }
            if (headerLength > 0) {
                MemorySegment.copy(header, 0, target, offset, headerLength);
            }
            if (trailerLength > 0) {
                MemorySegment.copy(trailer, trailerOffset, target, offset + headerLength + encoded, trailerLength);
            }
            return headerLength + encoded + trailerLength;
        }
    }

    /** Copies prepared bytes (a broadcast record), patching the span field for each child. */
    static final class RawWriter implements RecordWriter {
        MemorySegment source;
        long offset;
        long length;
        int span;

        @Override
        public long write(MemorySegment target, long at, long limit) {
            if (length > limit) {
                return -1;
            }
            MemorySegment.copy(source, offset, target, at, length);
            target.set(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED, at + InvocationRecords.BROADCAST_SPAN, span);
            return length;
        }
    }
}
