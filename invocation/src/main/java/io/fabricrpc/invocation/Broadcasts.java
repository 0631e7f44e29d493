package io.fabricrpc.invocation;

import io.fabricrpc.api.RemoteBufferConsumer;
import io.fabricrpc.api.RemoteRunnable;
import io.fabricrpc.api.Synchronizer;
import io.fabricrpc.api.MessagingException;
import io.fabricrpc.messaging.RecordChannel;
import io.fabricrpc.messaging.RecordWriter;
import io.fabricrpc.serialization.CallEncoder;
import io.fabricrpc.api.SerializationRegistry;
import io.fabricrpc.transport.CounterSlot;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.transport.Transport;

import java.io.Serializable;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.function.IntFunction;

/**
 * Broadcasts over a binary tree of every worker thread of the job: the root builds one self-contained record
 * ({@link BroadcastRecordDescriptor}), sends it to the roots of the halves of its span, and each worker forwards it
 * the same way before running it. A broadcasting thread's record, encoder, sequence and ack region are its own
 * ({@link Sender}); ack slots have one writer each ({@link AckTarget}).
 */
final class Broadcasts {
    private final FabricRuntime runtime;
    private final ThreadContexts contexts;
    private final Transport transport;
    private final MemoryRegions memory;
    private final SerializationRegistry registry;
    private final int chunkSize;
    private final int rank;
    private final int size;
    private final int threads;

    Broadcasts(FabricRuntime runtime, ThreadContexts contexts, Transport transport, MemoryRegions memory,
               SerializationRegistry registry, int chunkSize) {
        this.runtime = runtime;
        this.contexts = contexts;
        this.transport = transport;
        this.memory = memory;
        this.registry = registry;
        this.chunkSize = chunkSize;
        this.rank = runtime.rank();
        this.size = runtime.size();
        this.threads = runtime.threadsPerProcess();
    }

    /** A broadcasting thread's state, filled in on its first broadcast (an acknowledged one for the ack parts). */
    static final class Sender {
        private long sequence;
        private MemorySegment record;
        private CallEncoder encoder;
        private LocalRegion ackRegion;
        private AckTarget ackTarget;
        /** Publishes this thread's own slot of {@link #ackRegion} when it runs its broadcast as the root. */
        private CounterSlot.Writer ownAck;
        /** Publishes this thread's own failed slot when its run as the root threw. */
        private CounterSlot.Writer ownFailed;
        /** Per nesting level, as {@link ThreadContext#writer()}. */
        private final RawWriter[] raws = new RawWriter[ThreadContext.MAX_NESTING];

        private RawWriter raw(int nesting) {
            RawWriter raw = raws[nesting];
            if (raw == null) {
                raw = new RawWriter();
                raws[nesting] = raw;
            }
            return raw;
        }

        void close() {
            if (ackRegion != null) {
                ackRegion.close();
            }
        }
    }

    void broadcast(RemoteRunnable function, Synchronizer sync) {
        broadcast(function, sync, 0, null, null, 0, 0, null);
    }

    /** The buffer's bytes travel in the record, after the call. */
    void inline(RemoteBufferConsumer function, MemorySegment buffer, long offset, long length,
              Synchronizer sync) {
        broadcast(function, sync, BroadcastRecordDescriptor.FLAG_INLINE, buffer.asSlice(offset, length), null, 0,
                length, null);
    }

    /** Every worker reads the bytes one-sided from {@code source}. */
    void read(RemoteBufferConsumer function, RemoteRegion source, long offset, long length, Synchronizer sync) {
        broadcast(function, sync, BroadcastRecordDescriptor.FLAG_READ, null, source, offset, length, null);
    }

    /** Writes {@code source}'s bytes into each rank's destination region, then broadcasts a call naming them. */
    void written(RemoteBufferConsumer function, LocalRegion source, long sourceOffset,
                 IntFunction<RemoteRegion> destinations, long destinationOffset, long length, Synchronizer sync) {
        long[] regionIds = new long[size];
        long[] tickets = new long[size];
        for (int r = 0; r < size; r++) {
            RemoteRegion destination = destinations.apply(r);
            regionIds[r] = destination.regionId();
            tickets[r] = runtime.link(r).write(source, sourceOffset, destination, destinationOffset, length);
        }
        // The tree may reach rank r through another process, so the bytes must have landed before any call leaves.
        for (int r = 0; r < size; r++) {
            runtime.link(r).awaitCompletion(tickets[r]);
        }
        broadcast(function, sync, BroadcastRecordDescriptor.FLAG_WRITTEN, null, null, destinationOffset, length,
                regionIds);
    }

    private void broadcast(Serializable function, Synchronizer sync, int flags, MemorySegment inline,
                           RemoteRegion readSource, long regionOffset, long length, long[] regionIds) {
        ThreadContext context = contexts.context();
        Sender sender = context.broadcasts;
        int root = context.rootIndex(threads);
        long sequence = sender.sequence + 1; // taken once the record is known to fit
        boolean ack = sync != null && sync.mode() == Synchronizer.Mode.CONSUMED;
        if (ack) {
            flags |= BroadcastRecordDescriptor.FLAG_ACK;
            if (sender.ackRegion == null) {
                sender.ackRegion = transport.allocate(AckTarget.regionLength(jobThreads()), RemoteAccess.WRITE);
                sender.ackTarget = new AckTarget(runtime, sender.ackRegion, jobThreads(), root);
                sender.ownAck = new CounterSlot.Writer(sender.ackRegion.segment(), AckTarget.slotOffset(root));
                sender.ownFailed = new CounterSlot.Writer(sender.ackRegion.segment(),
                        AckTarget.failedSlotOffset(jobThreads(), root));
            }
        }
        // A self-contained record (definition included) that every hop forwards unchanged but for the span. One
        // native buffer per thread: a record is sent (copied) before broadcast returns, so a broadcast from inside
        // the local run may reuse it.
        if (sender.record == null) {
            sender.record = Arena.ofAuto().allocate(chunkSize, Long.BYTES);
            sender.encoder = new CallEncoder(registry, "broadcast");
        }
        MemorySegment record = sender.record;
        BroadcastRecordDescriptor.writeHeader(record, root, flags, sequence);
        long at = BroadcastRecordDescriptor.HEADER_LENGTH;
        if (ack) {
            at = BroadcastRecordDescriptor.writeAck(record, at, sender.ackRegion.remote());
        }
        if (readSource != null) {
            at = BroadcastRecordDescriptor.writeRead(record, at, readSource, regionOffset, length);
        } else if (regionIds != null) {
            at = BroadcastRecordDescriptor.writeWritten(record, at, regionOffset, length, regionIds);
        }
        long room = record.byteSize() - at - (inline != null ? inline.byteSize() : 0);
        if (room <= 0) {
            throw new MessagingException("broadcastBuffer of " + inline.byteSize() + " bytes does not fit a "
                    + record.byteSize() + "-byte chunk with its " + at + "-byte header: broadcast it from a region "
                    + "(broadcastBuffer with a LocalRegion or RemoteRegion) or raise MessengerConfig.chunkSize");
        }
        sender.encoder.reset(); // every hop decodes the record on its own: it carries its definition
        int encoded = sender.encoder.encode(function, record, at, at + room);
        if (encoded < 0) {
            throw new MessagingException("broadcast record does not fit a " + record.byteSize() + "-byte chunk");
        }
        sender.sequence = sequence;
        at += encoded;
        if (inline != null) {
            MemorySegment.copy(inline, 0, record, at, inline.byteSize());
            at += inline.byteSize();
        }
        if (context.workerIndex >= 0) {
            forward(root, 0, jobThreads(), record, 0, at);
            runLocally(sender, function, inline, readSource, regionOffset, length, regionIds, ack, sequence);
        } else {
            // Not a worker: hand the whole tree to worker 0 of this process, which runs it as the root.
            send(context, root, record, 0, at, jobThreads());
        }
        if (ack) {
            sync.add(sender.ackTarget, sequence);
        }
    }

    private void runLocally(Sender sender, Serializable function, MemorySegment inline, RemoteRegion readSource,
                            long regionOffset, long length, long[] regionIds, boolean ack, long sequence) {
        boolean ran = false;
        try {
            if (function instanceof RemoteRunnable runnable) {
                runnable.run();
            } else {
                MemorySegment argument = inline;
                if (readSource != null) {
                    argument = memory.own(readSource.regionId()).segment().asSlice(regionOffset, length);
                } else if (regionIds != null) {
                    argument = memory.localRegion(regionIds[rank], regionOffset, length);
                }
                ((RemoteBufferConsumer) function).accept(argument);
            }
            ran = true;
        } finally {
            if (ack) {
                if (!ran) {
                    sender.ownFailed.publish(sequence); // before the ran slot, which the wait reads first
                }
                sender.ownAck.publish(sequence); // the root's own slot, after its run
            }
        }
    }

    /**
     * Sends a broadcast record to the children of {@code relative} in the tree rooted at worker {@code root}. A child
     * on a rank the job declared failed (or whose link refuses) is routed around: its own children get the record.
     */
    void forward(int root, int relative, int span, MemorySegment record, long offset, long length) {
        ThreadContext context = contexts.context();
        int total = jobThreads();
        while (span > 1) {
            int half = (span + 1) / 2;
            int child = (root + relative + half) % total;
            if (!sendUnlessGone(context, child, record, offset, length, span - half)) {
                forward(root, relative + half, span - half, record, offset, length);
            }
            span = half;
        }
    }

    private boolean sendUnlessGone(ThreadContext context, int child, MemorySegment record, long offset, long length,
                                   int span) {
        int childRank = child / threads;
        if (childRank != rank && runtime.isGone(childRank)) {
            return false;
        }
        try {
            send(context, child, record, offset, length, span);
            return true;
        } catch (io.fabricrpc.api.PeerFailedException fenced) {
            return false; // declared failed since the check, or its link broke: its subtree still gets the record
        }
    }

    private void send(ThreadContext context, int global, MemorySegment record, long offset, long length, int span) {
        Routes.Route route = context.route(0, global); // view 0: the plain channel (a RETRY_ASYNC one queues)
        RecordChannel channel = route.channel;
        context.markSent(route);
        RawWriter raw = context.broadcasts.raw(context.nesting);
        raw.source = record;
        raw.offset = offset;
        raw.length = length;
        raw.span = span;
        if (!channel.send(InvocationRecords.BROADCAST, raw)) {
            throw new MessagingException("broadcast to worker " + global + " refused: its buffers are full (FAIL policy)");
        }
    }

    private int jobThreads() {
        return size * threads;
    }

    /** Copies prepared bytes (a broadcast record), patching the span field for each child. */
    private static final class RawWriter implements RecordWriter {
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
            BroadcastRecordDescriptor.writeSpan(target, at, span);
            return length;
        }
    }
}
