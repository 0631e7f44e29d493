package io.fabricrpc.messaging;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.fabricrpc.fuzz.ClassVersionShim;
import io.fabricrpc.fuzz.FuzzSupport;
import io.fabricrpc.transport.ArenaRegion;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.transport.NullLink;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Fuzzes the receiver's walk of the chunks a sender writes one-sided ({@link SenderInbox} over {@link ChunkLayout}'s
 * record headers, seals and deferred publication): the input's first byte picks the ring (1..4 chunks) and the
 * growth chunks allocated for it (0..3), the rest is the chunks' contents, data areas one after the other. Documented
 * outcomes: records handed to the handler, each wholly inside its chunk's record capacity, or a
 * {@link CorruptChunkException} reported once to the error listener, after which the inbox accepts nothing. Poll
 * itself never throws.
 */
@ExtendWith(ClassVersionShim.class)
class SenderInboxFuzzTest {
    private static final List<Class<? extends Throwable>> DOCUMENTED = List.of(CorruptChunkException.class);
    static final int CHUNK_SIZE = ChunkLayout.MIN_CHUNK_SIZE;
    private static final int DATA_BYTES = CHUNK_SIZE - ChunkLayout.DATA_OFFSET;
    private static final int MAX_RING = 4;
    private static final int MAX_GROWN = 3;
    private static final List<LocalRegion> CHUNKS = new ArrayList<>();
    private static final RemoteRegion NOTIFY = new RemoteRegion(0, 99, 0, 4096, 0, RemoteAccess.WRITE);
    private static final NullLink LINK = new NullLink(1);

    static {
        for (int i = 0; i < MAX_RING + MAX_GROWN; i++) {
            CHUNKS.add(new ArenaRegion(i, CHUNK_SIZE, RemoteAccess.WRITE));
        }
    }

    @FuzzTest(maxDuration = FuzzSupport.MAX_DURATION)
    @Timeout(FuzzSupport.TIMEOUT_SECONDS)
    void chunks(byte[] input) {
        if (input.length == 0) {
            return;
        }
        int ring = 1 + (input[0] & 3);
        int growth = (input[0] >>> 2 & 3) % (MAX_GROWN + 1);
        int at = 1;
        for (int i = 0; i < ring + growth; i++) {
            MemorySegment chunk = CHUNKS.get(i).segment();
            chunk.fill((byte) 0);
            int n = i < ring ? Math.max(0, Math.min(DATA_BYTES, input.length - at)) : 0;
            MemorySegment.copy(MemorySegment.ofArray(input), at, chunk, ChunkLayout.DATA_OFFSET, n);
            at += n;
        }
        SenderInbox inbox = new SenderInbox(7L << 32, 8L << 32, LINK, NOTIFY, 0, CHUNK_SIZE,
                List.copyOf(CHUNKS.subList(0, ring)));
        inbox.grown.addAll(CHUNKS.subList(ring, ring + growth));
        List<Throwable> errors = new ArrayList<>();
        long capacityEnd = ChunkLayout.DATA_OFFSET + ChunkLayout.recordCapacity(CHUNK_SIZE);
        RecordHandler handler = (sender, tag, record, offset, length) -> {
            if (length <= 0 || offset < ChunkLayout.DATA_OFFSET + ChunkLayout.RECORD_HEADER_LENGTH
                    || offset + length > capacityEnd || tag < 0 || tag > ChunkLayout.SEAL_TAG) {
                throw new AssertionError("record of " + length + " bytes at " + offset + " with tag " + tag
                        + " outside the chunk's capacity (ends at " + capacityEnd + ")");
            }
        };
        try {
            // Each poll takes at most a chunk's worth of records; a ring of N chunks is walked in N + 1 polls.
            for (int i = 0; i < 2 * (MAX_RING + MAX_GROWN) + 2; i++) {
                inbox.poll(handler, 1024, (sender, error) -> errors.add(error));
            }
        } catch (Throwable e) {
            throw new AssertionError("poll threw (it reports failures to the listener): " + e, e);
        }
        for (Throwable e : errors) {
            if (e instanceof AssertionError assertion) {
                throw assertion; // the handler's check, reported like any failing call
            }
            FuzzSupport.expectDocumented(e, DOCUMENTED, input.length);
        }
        if (errors.size() > 1) {
            throw new AssertionError(errors.size() + " failures reported, a corrupt inbox reports one: " + errors);
        }
    }

    /** Chunks as the sender fills them: published records, a deferred pair proven by FOLLOWS, seals with growth. */
    @Test
    @EnabledIfSystemProperty(named = FuzzSupport.WRITE_SEEDS, matches = ".+")
    void writeSeeds() {
        Path dir = FuzzSupport.seedDirectory().resolve("io/fabricrpc/messaging/SenderInboxFuzzTestInputs/chunks");
        ByteBuffer one = chunk(0);
        record(one, ChunkLayout.header(5, 1), 5);
        record(one, ChunkLayout.header(12, 2 | ChunkLayout.TAG_NOTIFY), 12);
        FuzzSupport.writeSeed(dir, "published", bytes(one));
        ByteBuffer deferred = chunk(0);
        record(deferred, ChunkLayout.header(3, 1) & ~ChunkLayout.VALID, 3); // sent with VALID cleared
        record(deferred, ChunkLayout.header(4, 1) | ChunkLayout.FOLLOWS, 4); // a later write proves it
        FuzzSupport.writeSeed(dir, "deferred", bytes(deferred));
        ByteBuffer sealed = chunk(1 | 1 << 2); // a ring of 2 chunks, one grown
        record(sealed, ChunkLayout.header(8, 3), 8);
        sealed.putInt(ChunkLayout.sealHeader(1));
        FuzzSupport.writeSeed(dir, "sealed", bytes(sealed));
    }

    private static ByteBuffer chunk(int first) {
        ByteBuffer b = ByteBuffer.allocate(1 + DATA_BYTES).order(ByteOrder.nativeOrder());
        b.put((byte) first);
        return b;
    }

    private static void record(ByteBuffer b, int header, int length) {
        b.putInt(header);
        for (int i = 0; i < length; i++) {
            b.put((byte) (i + 1));
        }
        b.position(b.position() + (int) (ChunkLayout.recordSize(length) - ChunkLayout.RECORD_HEADER_LENGTH - length));
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.position()];
        b.flip().get(out);
        return out;
    }
}
