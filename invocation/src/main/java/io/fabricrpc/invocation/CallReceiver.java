package io.fabricrpc.invocation;

import io.fabricrpc.api.ThreadId;
import io.fabricrpc.mailbox.CorruptPacketException;
import io.fabricrpc.mailbox.PacketReader;
import io.fabricrpc.mailbox.Port;
import io.fabricrpc.messaging.PoisonReason;
import io.fabricrpc.messaging.RecordHandler;
import io.fabricrpc.messaging.RecordRejectedException;
import io.fabricrpc.serialization.CallDecoder;
import io.fabricrpc.serialization.CallDecodingException;
import io.fabricrpc.serialization.FunctionNotAllowedException;
import io.fabricrpc.serialization.UnknownFunctionException;
import io.fabricrpc.serialization.WrongContextException;
import io.fabricrpc.serialization.CallRecordDescriptor;
import io.fabricrpc.serialization.ResultCodec;
import io.fabricrpc.api.ResultTooLargeException;
import io.fabricrpc.transport.CounterSlot;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;
import org.agrona.collections.Long2ObjectHashMap;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Runs the invocation records addressed to one worker thread (record layouts in {@link InvocationRecords}).
 * One call decoder per sending thread (function ids are per link); confined to the thread running
 * {@code processCalls} for the worker.
 */
final class CallReceiver implements RecordHandler {
    private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;

    private final FabricRuntime runtime;
    private final ThreadId self;
    private final int selfGlobal;
    private final Object context;
    private final Long2ObjectHashMap<CallDecoder> decoders = new Long2ObjectHashMap<>();
    /** Send-based calls have their own function ids: they travel apart from the one-sided ones. */
    private final Long2ObjectHashMap<CallDecoder> sendDecoders = new Long2ObjectHashMap<>();
    private final SendQueueReader sendQueueReader = new SendQueueReader();
    /**
     * This worker's ack publishers, by owner endpoint, then region id (ids are never reused): one per broadcasting
     * thread's ack region, as a counter slot has one writer that keeps its sequence.
     */
    private final Long2ObjectHashMap<Long2ObjectHashMap<AckWriters>> ackWriters = new Long2ObjectHashMap<>();
    private final CallDecoder broadcastDecoder;
    private final ResultCodec results;
    private LocalRegion resultScratch;
    /** Shutdown signals received (one per sender channel that closed); read by the worker's own thread. */
    long shutdownSignals;
    private LocalRegion readScratch;

    CallReceiver(FabricRuntime runtime, ThreadId self, Object context) {
        this.runtime = runtime;
        this.self = self;
        this.selfGlobal = self.globalIndex(runtime.threadsPerProcess());
        this.context = context;
        this.broadcastDecoder = new CallDecoder(runtime.registry(), "broadcasts to " + self, context);
        this.results = new ResultCodec(runtime.registry());
    }

    private long lastSender = -1;
    private CallDecoder lastDecoder;

    private CallDecoder decoder(long sender) {
        if (sender == lastSender) {
            return lastDecoder; // records arrive in runs per sender: skip the map
        }
        CallDecoder decoder = decoders.get(sender);
        if (decoder == null) {
            decoder = new CallDecoder(runtime.registry(), ThreadId.fromLong(sender) + " -> " + self, context);
            decoders.put(sender, decoder);
        }
        lastSender = sender;
        lastDecoder = decoder;
        return decoder;
    }

    /**
     * Runs one record. A record of an unknown kind, or one the decoder cannot read (an unknown function id, a malformed
     * record or definition), drops the channel: function ids and definitions travel in the channel's stream, so the
     * records behind it can no longer be trusted ({@link RecordRejectedException}). A refused function, a wrong
     * context and whatever the function throws fail that call only.
     */
    @Override
    public void onRecord(long sender, int tag, MemorySegment record, long offset, long length) {
        try {
            run(sender, tag, record, offset, length);
        } catch (UnknownFunctionException e) {
            throw new RecordRejectedException(PoisonReason.UNKNOWN_FUNCTION, e.getMessage(), e);
        } catch (FunctionNotAllowedException | WrongContextException e) {
            throw e;
        } catch (CallDecodingException e) {
            throw new RecordRejectedException(PoisonReason.DECODE_ERROR, e.getMessage(), e);
        }
    }

    private void run(long sender, int tag, MemorySegment record, long offset, long length) {
        long limit = offset + length;
        switch (tag) {
            case InvocationRecords.CALL -> decoder(sender).invoke(record, offset, limit, null);
            case InvocationRecords.CALL_BUFFER -> {
                long end = CallRecordDescriptor.recordEnd(record, offset, limit);
                decoder(sender).invoke(record, offset, end, record.asSlice(end, limit - end));
            }
            case InvocationRecords.CALL_BUFFER_WRITTEN -> {
                long regionId = record.get(LONG, offset);
                long at = record.get(LONG, offset + 8);
                long bytes = record.get(LONG, offset + 16);
                MemorySegment buffer = runtime.localRegion(regionId, at, bytes);
                decoder(sender).invoke(record, offset + 24, limit, buffer);
            }
            case InvocationRecords.CALL_BUFFER_READ -> {
                RemoteRegion source = RemoteRegion.decode(record, offset);
                long at = record.get(LONG, offset + RemoteRegion.ENCODED_LENGTH);
                long bytes = record.get(LONG, offset + RemoteRegion.ENCODED_LENGTH + 8);
                MemorySegment buffer = readFrom(ThreadId.rankOf(sender), source, at, bytes);
                decoder(sender).invoke(record, offset + RemoteRegion.ENCODED_LENGTH + 16, limit, buffer);
            }
            case InvocationRecords.BROADCAST -> broadcast(record, offset, limit);
            case InvocationRecords.SHUTDOWN_SIGNAL -> shutdownSignals++;
            default -> throw new RecordRejectedException(PoisonReason.UNKNOWN_KIND, "unknown invocation kind " + tag
                    + " in a " + length + "-byte record from " + ThreadId.fromLong(sender), null);
        }
    }

    private MemorySegment readFrom(int rank, RemoteRegion source, long at, long bytes) {
        if (readScratch == null || readScratch.length() < bytes) {
            if (readScratch != null) {
                readScratch.close();
            }
            readScratch = runtime.transport().allocate(Math.max(4096, Long.highestOneBit(Math.max(1, bytes - 1)) << 1),
                    RemoteAccess.NONE);
        }
        Link link = runtime.link(rank);
        link.awaitCompletion(link.read(source, at, readScratch, 0, bytes)); // bounded by the link's liveness
        return readScratch.segment().asSlice(0, bytes);
    }

    /**
     * Serves one request on a mailbox port this worker locked (layout in {@link ReturnCalls}): runs the call and
     * writes its result, or the failure, into the same packet. Whatever the packet holds, the caller gets an answer
     * and this thread goes on; failures of the call are also reported here, as for one-way calls.
     */
    void serveMailbox(Port port, int callerRank) {
        servingRank = callerRank;
        long written;
        try {
            port.recv(mailboxReader);
            written = mailboxWritten;
        } catch (CorruptPacketException e) {
            written = encodeFailure(e);
        } catch (RuntimeException | Error e) {
            runtime.reportError(ThreadId.pack(callerRank, 0), e); // the caller failed or went silent mid-stream
            port.close();
            return;
        }
        try {
            port.send(resultScratch.segment(), 0, written);
        } catch (RuntimeException e) {
            runtime.reportError(mailboxSender, e); // the caller died: nothing to answer
        } finally {
            port.close();
        }
    }

    private int servingRank;
    private long mailboxSender;
    private long mailboxWritten;
    private final PacketReader mailboxReader = (message, length) -> mailboxWritten = runMailboxCall(message, length);
    private CallDecoder selfContained;
    private final Long2ObjectHashMap<CallDecoder> mailboxDecoders = new Long2ObjectHashMap<>();
    private LocalRegion requestScratch;

    private long runMailboxCall(MemorySegment message, long length) {
        mailboxSender = ThreadId.pack(servingRank, 0);
        try {
            if (length < ReturnCalls.HEADER) {
                throw new IllegalArgumentException("corrupt mailbox call of " + length + " bytes (header "
                        + ReturnCalls.HEADER + ") from rank " + servingRank);
            }
            long sender = message.get(LONG, ReturnCalls.SENDER);
            int flags = message.get(INT, ReturnCalls.FLAGS);
            if (ThreadId.rankOf(sender) != servingRank || (flags & ~ReturnCalls.SELF_CONTAINED) != 0) {
                throw new IllegalArgumentException("corrupt mailbox call header (sender " + Long.toHexString(sender)
                        + ", flags 0x" + Integer.toHexString(flags) + ") on the channel from rank " + servingRank);
            }
            mailboxSender = sender;
            if (!LocalRegion.isPlainNative(message)) { // a streamed request, reassembled on the heap
                requestScratch = ensure(requestScratch, length);
                MemorySegment.copy(message, 0, requestScratch.segment(), 0, length);
                message = requestScratch.segment();
            }
            CallDecoder decoder;
            if ((flags & ReturnCalls.SELF_CONTAINED) != 0) {
                if (selfContained == null) {
                    selfContained = new CallDecoder(runtime.registry(), "(mailbox) -> " + self, context);
                }
                decoder = selfContained;
                decoder.reset();
            } else {
                decoder = mailboxDecoders.get(sender);
                if (decoder == null) {
                    decoder = new CallDecoder(runtime.registry(), ThreadId.fromLong(sender) + " -> " + self, context);
                    mailboxDecoders.put(sender, decoder);
                }
            }
            decoder.invoke(message, ReturnCalls.HEADER, length, null);
            return encodeValue(decoder.lastResult());
        } catch (Throwable e) {
            // The caller is waiting: it gets the failure (an Error too) instead of a hang; it is reported here too.
            runtime.reportError(mailboxSender, e);
            return encodeFailure(e);
        }
    }

    /** Encodes the result, growing the scratch up to the largest message; too large is a failure naming the bound. */
    private long encodeValue(Object value) {
        long limit = runtime.mailboxes().config().maxMessageBytes();
        resultScratch = ensure(resultScratch, runtime.mailboxes().config().packetSize());
        while (true) {
            MemorySegment scratch = resultScratch.segment();
            int written = results.encodeValue(value, scratch, 0, scratch.byteSize());
            if (written >= 0) {
                return written;
            }
            if (scratch.byteSize() >= limit) {
                return encodeFailure(new ResultTooLargeException("the callReturn result of type "
                        + value.getClass().getName() + " is larger than the largest mailbox message of " + limit + " bytes ("
                        + MailboxChannelSet.MAX_MESSAGE_KEY + "; packets are "
                        + runtime.mailboxes().config().packetSize() + " bytes, returnSlotBytes)"));
            }
            resultScratch = ensure(resultScratch, Math.min(limit, scratch.byteSize() * 4));
        }
    }

    private long encodeFailure(Throwable failure) {
        resultScratch = ensure(resultScratch, runtime.mailboxes().config().packetSize());
        MemorySegment scratch = resultScratch.segment();
        int written = results.encodeFailure(failure, scratch, 0, scratch.byteSize());
        if (written < 0) {
            written = results.encodeFailure(new IllegalStateException(failure.getClass().getName()
                    + " (message too long to return)"), scratch, 0, scratch.byteSize());
        }
        return Math.max(written, 0);
    }

    private LocalRegion ensure(LocalRegion scratch, long bytes) {
        if (scratch != null && scratch.length() >= bytes) {
            return scratch;
        }
        if (scratch != null) {
            scratch.close();
        }
        return runtime.transport().allocate(bytes, RemoteAccess.NONE);
    }

    private void broadcast(MemorySegment record, long offset, long limit) {
        int root = record.get(INT, offset + InvocationRecords.BROADCAST_ROOT);
        int span = record.get(INT, offset + InvocationRecords.BROADCAST_SPAN);
        int flags = record.get(INT, offset + InvocationRecords.BROADCAST_FLAGS);
        long sequence = record.get(LONG, offset + InvocationRecords.BROADCAST_SEQUENCE);
        int threads = runtime.threadCount();
        int relative = Math.floorMod(selfGlobal - root, threads);
        if (span < 1 || relative + span > threads) {
            throw new IllegalArgumentException("corrupt broadcast record: root " + root + ", span " + span + " at worker "
                    + selfGlobal + " of " + threads);
        }
        // Children first, so the tree's depth, not this call's duration, bounds the broadcast's latency.
        runtime.forwardBroadcast(root, relative, span, record, offset, limit - offset);
        long at = offset + InvocationRecords.BROADCAST_HEADER;
        RemoteRegion acks = null;
        if ((flags & InvocationRecords.BROADCAST_ACK) != 0) {
            acks = RemoteRegion.decode(record, at);
            at += RemoteRegion.ENCODED_LENGTH;
        }
        MemorySegment argument = null;
        if ((flags & InvocationRecords.BROADCAST_READ) != 0) {
            RemoteRegion source = RemoteRegion.decode(record, at);
            argument = readFrom(root / runtime.threadsPerProcess(), source, record.get(LONG, at + RemoteRegion.ENCODED_LENGTH),
                    record.get(LONG, at + RemoteRegion.ENCODED_LENGTH + 8));
            at += RemoteRegion.ENCODED_LENGTH + 16;
        } else if ((flags & InvocationRecords.BROADCAST_WRITTEN) != 0) {
            long regionOffset = record.get(LONG, at);
            long bytes = record.get(LONG, at + 8);
            long regionId = record.get(LONG, at + 16 + 8L * self.rank());
            argument = runtime.localRegion(regionId, regionOffset, bytes);
            at += 16 + 8L * runtime.size();
        }
        long end = CallRecordDescriptor.recordEnd(record, at, limit);
        if ((flags & InvocationRecords.BROADCAST_INLINE) != 0) {
            argument = record.asSlice(end, limit - end);
        }
        broadcastDecoder.reset(); // each broadcast record carries its own definition
        boolean ran = false;
        try {
            broadcastDecoder.invoke(record, at, end, argument);
            ran = true;
        } finally {
            if (acks != null) {
                // Single writer of these slots; ordered after the run by program order and the link's issue order,
                // the failed slot before the ran slot the broadcaster reads first.
                AckWriters writers = ackWriters(root, acks);
                if (!ran) {
                    writers.failed.publish(sequence);
                }
                writers.ran.publish(sequence);
            }
        }
    }

    /** This worker's two slots in one broadcasting thread's ack region ({@link AckTarget}). */
    private record AckWriters(CounterSlot.Writer ran, CounterSlot.Writer failed) {
    }

    private AckWriters ackWriters(int root, RemoteRegion acks) {
        Long2ObjectHashMap<AckWriters> byRegion = ackWriters.get(acks.ownerId());
        if (byRegion == null) {
            byRegion = new Long2ObjectHashMap<>();
            ackWriters.put(acks.ownerId(), byRegion);
        }
        AckWriters writers = byRegion.get(acks.regionId());
        if (writers == null) {
            Link link = runtime.link(root / runtime.threadsPerProcess());
            writers = new AckWriters(new CounterSlot.Writer(link, acks, AckTarget.slotOffset(selfGlobal)),
                    new CounterSlot.Writer(link, acks, AckTarget.failedSlotOffset(runtime.threadCount(), selfGlobal)));
            byRegion.put(acks.regionId(), writers);
        }
        return writers;
    }

    /** Adapts the worker's send queue (Agrona ring over {@code memory}) to decoding in place. */
    SendQueueReader sendQueueReader(MemorySegment memory) {
        sendQueueReader.memory = memory;
        return sendQueueReader;
    }

    final class SendQueueReader implements org.agrona.concurrent.MessageHandler {
        MemorySegment memory;

        @Override
        public void onMessage(int kind, org.agrona.MutableDirectBuffer buffer, int index, int length) {
            long sender = memory.get(LONG, index);
            CallDecoder decoder = sendDecoders.get(sender);
            if (decoder == null) {
                decoder = new CallDecoder(runtime.registry(), ThreadId.fromLong(sender) + " => " + self, context);
                sendDecoders.put(sender, decoder);
            }
            try {
                decoder.invoke(memory, index + 8L, (long) index + length, null);
            } catch (Throwable e) {
                runtime.reportError(sender, e); // an Error in one call does not end this thread
            }
        }
    }

    void close() {
        if (resultScratch != null) {
            resultScratch.close();
        }
        if (requestScratch != null) {
            requestScratch.close();
        }
        if (readScratch != null) {
            readScratch.close();
        }
    }
}
