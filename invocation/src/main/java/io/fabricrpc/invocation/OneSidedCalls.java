package io.fabricrpc.invocation;

import io.fabricrpc.api.RemoteBufferConsumer;
import io.fabricrpc.api.Synchronizer;
import io.fabricrpc.messaging.ChunkLayout;
import io.fabricrpc.messaging.Messenger;
import io.fabricrpc.messaging.RecordChannel;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;

import java.io.Serializable;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The one-sided call primitives' sending side: an invocation record (layouts in {@link InvocationRecords}) written
 * by the calling thread's writer into its channel to the destination, and registered with the call's synchronizer.
 * Holds no state: a call touches the calling thread's {@link ThreadContext} only.
 */
final class OneSidedCalls {
    /** CALL_BUFFER_WRITTEN's header: | region id (8) | offset (8) | length (8) |. */
    private static final int WRITTEN_REGION_ID = 0;
    private static final int WRITTEN_OFFSET = 8;
    private static final int WRITTEN_LENGTH = 16;
    private static final int WRITTEN_HEADER = 24;
    /** CALL_BUFFER_READ's header: | source region (40) | offset (8) | length (8) |. */
    private static final int READ_OFFSET = RemoteRegion.ENCODED_LENGTH;
    private static final int READ_LENGTH = READ_OFFSET + 8;
    private static final int READ_HEADER = READ_LENGTH + 8;

    private OneSidedCalls() {
    }

    /** Prepares the calling thread's writer for a call of {@code function} through {@code route}. */
    static ThreadContext.CallWriter prepare(ThreadContext context, Routes.Route route, Serializable function) {
        ThreadContext.CallWriter writer = context.writer();
        // Here, in a force-inlined method (jit-directives.json), so that the lambda can stay in the caller's
        // registers: nothing but the capture reads it (CapturedCall).
        writer.call.capture(function);
        writer.prepare(route.encoder);
        context.markSent(route);
        return writer;
    }

    /** Sends the record {@code writer} holds through {@code route} and registers it with {@code sync}. */
    static boolean send(Routes.Route route, ThreadContext.CallWriter writer, int kind, Synchronizer sync) {
        RecordChannel channel = route.channel;
        int tag = sync != null && sync.mode() == Synchronizer.Mode.CONSUMED ? kind | ChunkLayout.TAG_NOTIFY : kind;
        // One call site of the direct channel's send (a messenger) serves plain messengers and ovfl's direct path
        // alike, so both take the same inlined path; the layers' own send runs only to batch or park a call.
        Messenger direct = route.direct;
        boolean sent = direct != null && direct.send(tag, writer) || direct != channel && channel.send(tag, writer);
        if (sync == null) {
            return sent;
        }
        boolean consumed = sync.mode() == Synchronizer.Mode.CONSUMED;
        if (sent) {
            if (consumed) {
                sync.add(route.consumed, channel.recordsSent());
            } else {
                sync.add(route.sent, channel.lastTicket());
            }
        }
        return sent;
    }

    /** CALL_BUFFER: the buffer's bytes travel in the record, after the call. */
    static boolean callBuffer(ThreadContext context, int global, RemoteBufferConsumer function, MemorySegment buffer,
                              long offset, long length, Synchronizer sync) {
        Routes.Route route = context.route(global);
        ThreadContext.CallWriter writer = prepare(context, route, function);
        writer.trailer = buffer;
        writer.trailerOffset = offset;
        writer.trailerLength = length;
        return send(route, writer, InvocationRecords.CALL_BUFFER, sync);
    }

    /** CALL_BUFFER_WRITTEN: writes the bytes one-sided into {@code destination}, then sends the call naming them. */
    static boolean callWritten(ThreadContexts contexts, int global, Link link, RemoteBufferConsumer function,
                               LocalRegion source, long sourceOffset, RemoteRegion destination, long destinationOffset,
                               long length, Synchronizer sync) {
        // Same link as the call record, issued first: the receiver sees the bytes before it runs the call.
        long ticket = link.write(source, sourceOffset, destination, destinationOffset, length);
        ThreadContext context = contexts.context();
        Routes.Route route = context.route(global);
        ThreadContext.CallWriter writer = prepare(context, route, function);
        MemorySegment header = writer.header;
        header.set(ValueLayout.JAVA_LONG_UNALIGNED, WRITTEN_REGION_ID, destination.regionId());
        header.set(ValueLayout.JAVA_LONG_UNALIGNED, WRITTEN_OFFSET, destinationOffset);
        header.set(ValueLayout.JAVA_LONG_UNALIGNED, WRITTEN_LENGTH, length);
        writer.headerLength = WRITTEN_HEADER;
        boolean sent = send(route, writer, InvocationRecords.CALL_BUFFER_WRITTEN,
                sync != null && sync.mode() == Synchronizer.Mode.CONSUMED ? sync : null);
        if (sent && sync != null && sync.mode() == Synchronizer.Mode.SENT) {
            sync.add(route.sent, ticket); // the source buffer, not the record, is what matters
        }
        return sent;
    }

    /** CALL_BUFFER_READ: the receiver reads the bytes one-sided from {@code source}. */
    static boolean callRead(ThreadContext context, int global, RemoteBufferConsumer function, RemoteRegion source,
                            long offset, long length, Synchronizer sync) {
        Routes.Route route = context.route(global);
        ThreadContext.CallWriter writer = prepare(context, route, function);
        MemorySegment header = writer.header;
        source.encode(header, 0);
        header.set(ValueLayout.JAVA_LONG_UNALIGNED, READ_OFFSET, offset);
        header.set(ValueLayout.JAVA_LONG_UNALIGNED, READ_LENGTH, length);
        writer.headerLength = READ_HEADER;
        return send(route, writer, InvocationRecords.CALL_BUFFER_READ, sync);
    }

    /** Test hook: sends arbitrary bytes as an invocation record of {@code kind} (a misbehaving or corrupt peer). */
    static boolean sendBytes(ThreadContext context, int global, int kind, byte[] bytes) {
        RecordChannel channel = context.route(0, global).channel;
        MemorySegment source = MemorySegment.ofArray(bytes);
        return channel.send(kind, (target, offset, limit) -> {
            if (bytes.length > limit) {
                return -1;
            }
            MemorySegment.copy(source, 0, target, offset, bytes.length);
            return bytes.length;
        });
    }
}
