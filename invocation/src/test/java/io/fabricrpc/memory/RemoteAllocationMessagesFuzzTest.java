package io.fabricrpc.memory;

import io.fabricrpc.api.RemoteAllocationException;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.fabricrpc.fuzz.ClassVersionShim;
import io.fabricrpc.fuzz.FuzzSupport;
import io.fabricrpc.api.MessagingException;
import io.fabricrpc.messaging.ServiceDispatcher;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.transport.NullLink;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static io.fabricrpc.memory.RemoteAllocationMessages.*;

/**
 * Fuzzes what {@link RemoteAllocationService} decodes from a peer ({@link RemoteAllocationMessages}): the input's
 * first byte picks the message, the rest is its payload. 0: an ALLOCATE_REQUEST and 1: a FREE_REQUEST, served (after
 * one grant, which a free may name); 2: an ALLOCATE_REPLY delivered to the service thread; 3: the reply an
 * {@code allocate} call gets. Documented outcomes: a request is answered with one reply of a known status, never an
 * exception; a reply the service thread cannot take is reported as a {@link MessagingException} whose cause is a
 * {@link RemoteAllocationException} (or an unknown request id); the caller gets a region or a
 * {@link RemoteAllocationException}.
 */
@ExtendWith(ClassVersionShim.class)
class RemoteAllocationMessagesFuzzTest {
    private static final List<Class<? extends Throwable>> DOCUMENTED = List.of(RemoteAllocationException.class);
    private static final long LIMIT = 1 << 20;
    private static final MemorySegment BACKING = Arena.ofShared().allocate(64, 8);

    /** A link that records the service's replies and, for the requester, answers each request with {@code reply}. */
    private static final class Peer extends NullLink {
        final List<byte[]> sent = new ArrayList<>();
        ServiceDispatcher answerFrom;
        byte[] reply;

        Peer() {
            super(0x42);
        }

        @Override
        protected boolean onSend(int type, MemorySegment payload, long offset, int length) {
            sent.add(payload.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE));
            if (answerFrom != null) {
                long id = payload.get(ValueLayout.JAVA_LONG_UNALIGNED, offset + REQUEST_ID);
                answerFrom.complete(id, MemorySegment.ofArray(reply));
            }
            return true;
        }
    }

    @FuzzTest(maxDuration = FuzzSupport.MAX_DURATION)
    @Timeout(FuzzSupport.TIMEOUT_SECONDS)
    void messages(byte[] input) {
        if (input.length == 0) {
            return;
        }
        ServiceDispatcher dispatcher = new ServiceDispatcher(null);
        List<Throwable> reported = new ArrayList<>();
        dispatcher.onError(reported::add);
        long[] ids = {100};
        RemoteAllocationService service = new RemoteAllocationService(dispatcher, LIMIT,
                (bytes, access) -> region(ids[0]++, bytes, access), region -> { });
        Peer peer = new Peer();
        byte[] payload = Arrays.copyOfRange(input, 1, input.length);
        MemorySegment message = MemorySegment.ofArray(payload);
        switch (input[0] & 3) {
            case 0 -> serve(dispatcher, peer, ALLOCATE_REQUEST, message, ALLOCATE_REPLY);
            case 1 -> {
                serve(dispatcher, peer, ALLOCATE_REQUEST, allocateRequest(1, 4096), ALLOCATE_REPLY); // region 100
                peer.sent.clear();
                serve(dispatcher, peer, FREE_REQUEST, message, FREE_REPLY);
            }
            case 2 -> {
                dispatcher.newRequest(); // request 1 is pending
                dispatcher.dispatch(peer, ALLOCATE_REPLY, message);
                for (Throwable e : reported) {
                    if (!(e instanceof MessagingException) || e.getCause() != null
                            && !(e.getCause() instanceof RemoteAllocationException)) {
                        throw new AssertionError("reply of " + payload.length + " bytes reported as " + e, e);
                    }
                }
            }
            default -> {
                peer.answerFrom = dispatcher;
                peer.reply = payload;
                try {
                    RemoteRegion region = service.allocate(peer, 4096, RemoteAccess.WRITE, Duration.ofSeconds(1));
                    if (region == null) {
                        throw new AssertionError("allocate returned null for a reply of " + payload.length + " bytes");
                    }
                } catch (Throwable e) {
                    FuzzSupport.expectDocumented(e, DOCUMENTED, input.length);
                }
            }
        }
    }

    private static void serve(ServiceDispatcher dispatcher, Peer peer, int type, MemorySegment request, int replyType) {
        List<Throwable> reported = new ArrayList<>();
        dispatcher.onError(reported::add);
        dispatcher.dispatch(peer, type, request);
        if (!reported.isEmpty()) {
            throw new AssertionError("serving a request of " + request.byteSize() + " bytes failed: " + reported.get(0),
                    reported.get(0));
        }
        if (peer.sent.size() != 1 || peer.sent.get(0).length != REPLY_LENGTH) {
            throw new AssertionError("a request of " + request.byteSize() + " bytes got " + peer.sent.size()
                    + " replies, expected one of " + REPLY_LENGTH + " bytes");
        }
        int status = MemorySegment.ofArray(peer.sent.get(0)).get(ValueLayout.JAVA_INT_UNALIGNED, REPLY_STATUS);
        if (status(status).startsWith("unknown")) {
            throw new AssertionError("reply status " + status);
        }
    }

    private static LocalRegion region(long id, long bytes, RemoteAccess access) {
        RemoteRegion remote = new RemoteRegion(0, id, 0, bytes, 0, access);
        return new LocalRegion() {
            @Override
            public MemorySegment segment() {
                return BACKING;
            }

            @Override
            public RemoteRegion remote() {
                return remote;
            }

            @Override
            public void close() {
            }
        };
    }

    private static MemorySegment allocateRequest(long id, long bytes) {
        MemorySegment request = MemorySegment.ofArray(new byte[ALLOCATE_REQUEST_LENGTH]);
        request.set(ValueLayout.JAVA_LONG_UNALIGNED, REQUEST_ID, id);
        request.set(ValueLayout.JAVA_LONG_UNALIGNED, ALLOC_BYTES, bytes);
        request.set(ValueLayout.JAVA_INT_UNALIGNED, ALLOC_ACCESS, RemoteAccess.READ_WRITE.ordinal());
        return request;
    }

    /** Each message as the service encodes it. */
    @Test
    @EnabledIfSystemProperty(named = FuzzSupport.WRITE_SEEDS, matches = ".+")
    void writeSeeds() {
        Path dir = FuzzSupport.seedDirectory().resolve("io/fabricrpc/memory/RemoteAllocationMessagesFuzzTestInputs/messages");
        FuzzSupport.writeSeed(dir, "allocate-request", prefixed(0, allocateRequest(7, 4096).toArray(ValueLayout.JAVA_BYTE)));
        MemorySegment free = MemorySegment.ofArray(new byte[FREE_REQUEST_LENGTH]);
        free.set(ValueLayout.JAVA_LONG_UNALIGNED, REQUEST_ID, 8);
        region(100, 4096, RemoteAccess.READ_WRITE).remote().encode(free, FREE_REGION);
        FuzzSupport.writeSeed(dir, "free-request", prefixed(1, free.toArray(ValueLayout.JAVA_BYTE)));
        MemorySegment reply = MemorySegment.ofArray(new byte[REPLY_LENGTH]);
        reply.set(ValueLayout.JAVA_LONG_UNALIGNED, REQUEST_ID, 1);
        reply.set(ValueLayout.JAVA_LONG_UNALIGNED, REPLY_LIMIT, LIMIT);
        reply.set(ValueLayout.JAVA_LONG_UNALIGNED, REPLY_IN_USE, 4096);
        region(5, 4096, RemoteAccess.WRITE).remote().encode(reply, REPLY_REGION);
        FuzzSupport.writeSeed(dir, "reply-delivered", prefixed(2, reply.toArray(ValueLayout.JAVA_BYTE)));
        FuzzSupport.writeSeed(dir, "reply-awaited", prefixed(3, reply.toArray(ValueLayout.JAVA_BYTE)));
        reply.set(ValueLayout.JAVA_INT_UNALIGNED, REPLY_STATUS, STATUS_OVER_LIMIT);
        FuzzSupport.writeSeed(dir, "reply-refused", prefixed(3, reply.toArray(ValueLayout.JAVA_BYTE)));
    }

    private static byte[] prefixed(int selector, byte[] message) {
        byte[] out = new byte[1 + message.length];
        out[0] = (byte) selector;
        System.arraycopy(message, 0, out, 1, message.length);
        return out;
    }
}
