package io.fabricrpc.messaging;

import io.fabricrpc.api.MessagingException;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.fabricrpc.fuzz.ClassVersionShim;
import io.fabricrpc.fuzz.FuzzSupport;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * Fuzzes the decoding of the chunk service's two-sided messages ({@link ChunkServiceMessages}): the input's first
 * byte says which (even: a CHUNK_REQUEST the service thread serves; odd: a CHUNK_REPLY, for a request of
 * {@code 1 + (byte >>> 1) % 64} chunks), the rest is the message. Documented outcomes: a request is well formed
 * (then every field decodes) or refused as malformed, never an exception; a reply yields its status and, for OK,
 * between 1 and the requested number of chunk handles, or a {@link MessagingException}.
 */
@ExtendWith(ClassVersionShim.class)
class ChunkServiceMessagesFuzzTest {
    private static final List<Class<? extends Throwable>> DOCUMENTED = List.of(MessagingException.class);

    @FuzzTest(maxDuration = FuzzSupport.MAX_DURATION)
    @Timeout(FuzzSupport.TIMEOUT_SECONDS)
    void messages(byte[] input) {
        if (input.length == 0) {
            return;
        }
        MemorySegment message = MemorySegment.ofArray(Arrays.copyOfRange(input, 1, input.length));
        if ((input[0] & 1) == 0) {
            if (ChunkServiceMessages.wellFormedRequest(message)) {
                RemoteRegion.decode(message, ChunkServiceMessages.REQ_NOTIFY_REGION); // what serving then reads
                message.get(ValueLayout.JAVA_LONG_UNALIGNED, ChunkServiceMessages.REQ_NOTIFY_OFFSET);
            }
            return;
        }
        int requested = 1 + (input[0] >>> 1 & 0x7F) % ChunkServiceMessages.MAX_CHUNKS_PER_REQUEST;
        try {
            if (ChunkServiceMessages.replyStatus(message) == ChunkServiceMessages.STATUS_OK) {
                RemoteRegion[] chunks = ChunkServiceMessages.replyChunks(message, requested);
                if (chunks.length < 1 || chunks.length > requested) {
                    throw new AssertionError(chunks.length + " chunks granted for a request of " + requested);
                }
            }
        } catch (Throwable e) {
            FuzzSupport.expectDocumented(e, DOCUMENTED, input.length);
        }
    }

    /** A request and replies as MessagingNode encodes them. */
    @Test
    @EnabledIfSystemProperty(named = FuzzSupport.WRITE_SEEDS, matches = ".+")
    void writeSeeds() {
        Path dir = FuzzSupport.seedDirectory().resolve("io/fabricrpc/messaging/ChunkServiceMessagesFuzzTestInputs/messages");
        MemorySegment request = MemorySegment.ofArray(new byte[1 + ChunkServiceMessages.REQUEST_LENGTH]);
        MemorySegment body = request.asSlice(1);
        body.set(ValueLayout.JAVA_LONG_UNALIGNED, ChunkServiceMessages.REQ_ID, 5);
        body.set(ValueLayout.JAVA_LONG_UNALIGNED, ChunkServiceMessages.REQ_SENDER, 1L << 32);
        body.set(ValueLayout.JAVA_LONG_UNALIGNED, ChunkServiceMessages.REQ_DEST, 2L << 32);
        body.set(ValueLayout.JAVA_INT_UNALIGNED, ChunkServiceMessages.REQ_COUNT, 2);
        body.set(ValueLayout.JAVA_INT_UNALIGNED, ChunkServiceMessages.REQ_CHUNK_SIZE, 4096);
        region(7).encode(body, ChunkServiceMessages.REQ_NOTIFY_REGION);
        body.set(ValueLayout.JAVA_LONG_UNALIGNED, ChunkServiceMessages.REQ_NOTIFY_OFFSET, 48);
        FuzzSupport.writeSeed(dir, "request", request.toArray(ValueLayout.JAVA_BYTE));
        MemorySegment reply = MemorySegment.ofArray(new byte[1 + ChunkServiceMessages.replyLength(2)]);
        reply.set(ValueLayout.JAVA_BYTE, 0, (byte) (1 | 1 << 1)); // a reply to a request of 2 chunks
        body = reply.asSlice(1);
        body.set(ValueLayout.JAVA_LONG_UNALIGNED, ChunkServiceMessages.REP_ID, 5);
        body.set(ValueLayout.JAVA_INT_UNALIGNED, ChunkServiceMessages.REP_COUNT, 2);
        region(8).encode(body, ChunkServiceMessages.REP_REGIONS);
        region(9).encode(body, ChunkServiceMessages.REP_REGIONS + RemoteRegion.ENCODED_LENGTH);
        FuzzSupport.writeSeed(dir, "reply", reply.toArray(ValueLayout.JAVA_BYTE));
        MemorySegment refused = MemorySegment.ofArray(new byte[1 + ChunkServiceMessages.replyLength(0)]);
        refused.set(ValueLayout.JAVA_BYTE, 0, (byte) 1);
        refused.asSlice(1).set(ValueLayout.JAVA_INT_UNALIGNED, ChunkServiceMessages.REP_STATUS,
                ChunkServiceMessages.STATUS_OVER_LIMIT);
        FuzzSupport.writeSeed(dir, "refused", refused.toArray(ValueLayout.JAVA_BYTE));
    }

    private static RemoteRegion region(long id) {
        return new RemoteRegion(3, id, 0x10000 * id, 4096, 11, RemoteAccess.WRITE);
    }
}
