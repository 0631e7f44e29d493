package io.fabricrpc.invocation;

import io.fabricrpc.api.ThreadId;
import io.fabricrpc.messaging.ReceivingThread;
import io.fabricrpc.messaging.RecordWriter;
import io.fabricrpc.serialization.CallEncoder;
import io.fabricrpc.serialization.CapturedCall;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One thread's state for making and running calls: its {@link Routes}, each kind of call's own per-thread state
 * (kept and filled in by that kind's class), reusable record writers per nesting level, and, for an attached worker,
 * its receiving side. Built whole by {@link ThreadContexts}; confined to its thread. It extends Routes for the
 * layout only (as JCTools builds its queues): a call reaches its route table one dependent load sooner.
 */
final class ThreadContext extends Routes {
    static final int MAX_NESTING = 4;
    private static final VarHandle POLLS;

    static {
        try {
            POLLS = MethodHandles.lookup().findVarHandle(ThreadContext.class, "polls", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final long senderId;
    /** The thread this context belongs to (the fast context lookup compares it). */
    final Thread thread;
    final SendCalls.Sender sendCalls;
    final Broadcasts.Sender broadcasts;
    final Collectives.Barriers barriers = new Collectives.Barriers();
    /** The worker this thread is attached as (or a handler thread standing in for), else -1 and nulls. */
    final int workerIndex;
    final ReceivingThread receiving;
    final CallReceiver receiver;
    /** True while this thread runs its incoming calls ({@code processCalls}): a wait there must not re-enter it. */
    boolean inProcessCalls;
    /** How deep in incoming calls run while this thread waits (see {@link #writer}). */
    int nesting;
    /**
     * One record writer per nesting level: a send that waits for room runs incoming calls (to avoid deadlock),
     * and those may send too; each level keeps its own half-prepared record.
     */
    private final CallWriter[] writers = new CallWriter[MAX_NESTING];
    /** ReturnCalls' state for this thread, created by it on first use. */
    ReturnCalls.CallerState returns;
    /** Rounds of processCalls this worker began: written by its thread only, read by {@link BlockedWorkers}. */
    @SuppressWarnings("unused") // accessed through POLLS
    private long polls;

    /** A context for a thread that is not a worker (it only calls). */
    ThreadContext(Routes.Network network, long senderId) {
        this(network, senderId, -1, null, null);
    }

    ThreadContext(Routes.Network network, long senderId, int workerIndex, ReceivingThread receiving,
                  CallReceiver receiver) {
        super(network, senderId);
        this.senderId = senderId;
        this.thread = Thread.currentThread();
        this.sendCalls = new SendCalls.Sender(network.jobThreads());
        this.broadcasts = new Broadcasts.Sender();
        this.workerIndex = workerIndex;
        this.receiving = receiving;
        this.receiver = receiver;
    }

    /** Owner: one more round of processCalls (a release store: a plain move on x86). */
    void countPoll() {
        POLLS.setRelease(this, (long) POLLS.get(this) + 1);
    }

    /** Any thread: the rounds counted so far (opaque: a diagnostic, no ordering needed). */
    long pollsSeen() {
        return (long) POLLS.getOpaque(this);
    }

    CallWriter writer() {
        CallWriter writer = writers[nesting];
        if (writer == null) {
            writer = new CallWriter();
            writers[nesting] = writer;
        }
        return writer;
    }

    /** True if {@code dest} is the worker this thread is attached as. */
    boolean isWorker(ThreadId dest) {
        return workerIndex >= 0 && dest.threadIndex() == workerIndex && dest.rank() == ThreadId.rankOf(senderId);
    }

    /** This context, unless it runs a call as {@code dest}: a blocking call to dest could never run then. */
    ThreadContext refuseBlockingCallToSelf(ThreadId dest) {
        if (inProcessCalls && isWorker(dest)) {
            throw new IllegalStateException("callReturn from a call run by worker " + dest + " to " + dest
                    + " itself: that call could run only after the current one returns (use callReturnAsync)");
        }
        return this;
    }

    /** The global index of the worker this thread is, or stands in for as a broadcast's root. */
    int rootIndex(int threadsPerProcess) {
        int rank = ThreadId.rankOf(senderId);
        return workerIndex >= 0 ? rank * threadsPerProcess + workerIndex : rank * threadsPerProcess;
    }

    /**
     * Writes an invocation record: an optional kind-specific header, the encoded call, an optional trailing
     * buffer. Fields are set before each send (no allocation per call).
     */
    static final class CallWriter implements RecordWriter {
        CallEncoder encoder;
        /** The call's function, taken apart when the call is made: the lambda itself is not kept (CapturedCall). */
        final CapturedCall call = new CapturedCall();
        final MemorySegment header = MemorySegment.ofArray(new byte[64]);
        int headerLength;
        MemorySegment trailer;
        long trailerOffset;
        long trailerLength;

        /** Prepares a plain call of the function just captured into {@link #call}. */
        void prepare(CallEncoder encoder) {
            this.encoder = encoder;
            this.headerLength = 0;
            this.trailer = null;
            this.trailerLength = 0;
        }

        @Override
        public long write(MemorySegment target, long offset, long room) {
            if ((headerLength | trailerLength) == 0) {
                // A plain call: kept apart from the copies below so that this stays small enough to inline.
                int encoded = room > 0 ? encoder.encode(call, target, offset, offset + room) : -1;
                return encoded < 0 ? -1 : encoded;
            }
            return writeWithHeaderOrTrailer(target, offset, room);
        }

        @Override
        public int knownLength() {
            return (headerLength | trailerLength) == 0 ? encoder.knownLength(call) : -1;
        }

        @Override
        public void writeKnown(MemorySegment target, long offset) {
            encoder.writeKnown(call, target, offset);
        }

        private long writeWithHeaderOrTrailer(MemorySegment target, long offset, long roomForAll) {
            long room = roomForAll - headerLength - trailerLength;
            if (room <= 0) {
                return -1;
            }
            int encoded = encoder.encode(call, target, offset + headerLength, offset + headerLength + room);
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
}
