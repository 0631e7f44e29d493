package io.fabricrpc.transport.rdma.firehose;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.fabricrpc.fuzz.ClassVersionShim;
import io.fabricrpc.fuzz.FuzzSupport;
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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.fabricrpc.transport.rdma.firehose.FirehoseMessages.*;

/**
 * Fuzzes the firehose move messages ({@link FirehoseMessages}) without a device: the input's first byte picks the
 * side. Even: a {@link FirehoseServer} serves the rest as a sequence of MOVE_REQUESTs (pins through a counting
 * registrar); documented outcome: each gets one reply of a known status whose region, when OK, is a bucket inside the
 * exposed segment; never an exception. Odd: {@link RemoteFirehoses#acquire} gets the rest as the reply to its move
 * request (the request id patched in); documented outcome: a mapping or a {@link FirehoseException} other than a
 * timeout (every request is answered).
 */
@ExtendWith(ClassVersionShim.class)
class FirehoseMessagesFuzzTest {
    private static final List<Class<? extends Throwable>> DOCUMENTED = List.of(FirehoseException.class);
    private static final int BUCKET = 4096;
    private static final MemorySegment EXPOSED = Arena.ofShared().allocate(4 * BUCKET, BUCKET);

    /** Registers nothing: a handle of the bucket's address, as the RDMA registrar would return. */
    private static final Registrar<LocalRegion> REGISTRAR = new Registrar<>() {
        @Override
        public LocalRegion register(long address, long length) {
            MemorySegment bucket = MemorySegment.ofAddress(address).reinterpret(length);
            RemoteRegion remote = new RemoteRegion(1, address, address, length, 7, RemoteAccess.WRITE);
            return new LocalRegion() {
                @Override
                public MemorySegment segment() {
                    return bucket;
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

        @Override
        public void deregister(LocalRegion registration) {
        }
    };

    @FuzzTest(maxDuration = FuzzSupport.MAX_DURATION)
    @Timeout(FuzzSupport.TIMEOUT_SECONDS)
    void messages(byte[] input) {
        if (input.length == 0) {
            return;
        }
        byte[] body = Arrays.copyOfRange(input, 1, input.length);
        if ((input[0] & 1) == 0) {
            serve(body);
        } else {
            await(body);
        }
    }

    private static void serve(byte[] requests) {
        FirehoseCache<LocalRegion> cache = new FirehoseCache<>(
                new FirehoseCache.Config(BUCKET, 2L * BUCKET, 0, TimeUnit.SECONDS.toNanos(1)), REGISTRAR);
        FirehoseServer server = new FirehoseServer(EXPOSED, cache, 2);
        List<byte[]> replies = new ArrayList<>();
        NullLink requester = new NullLink(5) {
            @Override
            protected boolean onSend(int type, MemorySegment payload, long offset, int length) {
                replies.add(payload.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE));
                return true;
            }
        };
        int at = 0;
        do { // a short last piece is a malformed request of its own
            int n = Math.min(REQUEST_LENGTH, requests.length - at);
            MemorySegment request = MemorySegment.ofArray(Arrays.copyOfRange(requests, at, at + n));
            replies.clear();
            try {
                server.onMessage(requester, MOVE_REQUEST, request);
            } catch (Throwable e) {
                throw new AssertionError("serving a request of " + n + " bytes threw: " + e, e);
            }
            if (replies.size() != 1 || replies.get(0).length != REPLY_LENGTH) {
                throw new AssertionError("a request got " + replies.size() + " replies");
            }
            MemorySegment reply = MemorySegment.ofArray(replies.get(0));
            int status = reply.get(ValueLayout.JAVA_INT_UNALIGNED, REP_STATUS_OFFSET);
            if (statusName(status).startsWith("unknown") || status == STATUS_MALFORMED_REPLY) {
                throw new AssertionError("reply status " + status);
            }
            if (status == STATUS_OK) {
                RemoteRegion region = RemoteRegion.decode(reply, REP_REGION_OFFSET);
                long offset = region.address() - EXPOSED.address();
                if (offset < 0 || offset % BUCKET != 0 || offset > EXPOSED.byteSize() - BUCKET
                        || region.length() != BUCKET) {
                    throw new AssertionError("pinned " + region + " outside the exposed buckets");
                }
            }
            at += n;
        } while (at < requests.length);
        server.close();
    }

    private static void await(byte[] reply) {
        RemoteFirehoses firehoses = new RemoteFirehoses(1, BUCKET, TimeUnit.MILLISECONDS.toNanos(500));
        int[] requests = {0};
        NullLink peer = new NullLink(6) {
            @Override
            protected boolean onSend(int type, MemorySegment request, long offset, int length) {
                byte[] answer = requests[0]++ == 0 ? reply.clone() : refusal();
                if (answer.length >= 8) {
                    MemorySegment.ofArray(answer).set(ValueLayout.JAVA_LONG_UNALIGNED, REP_ID_OFFSET,
                            request.get(ValueLayout.JAVA_LONG_UNALIGNED, offset + REQ_ID_OFFSET));
                }
                boolean taken = firehoses.onMessage(this, MOVE_REPLY, MemorySegment.ofArray(answer));
                if (taken != answer.length >= REPLY_LENGTH) {
                    throw new AssertionError("a reply of " + answer.length + " bytes taken: " + taken);
                }
                return true;
            }
        };
        if (reply.length < REPLY_LENGTH) {
            // Dropped as not a reply, so the requester would only time out: check the drop alone.
            if (firehoses.onMessage(peer, MOVE_REPLY, MemorySegment.ofArray(reply))) {
                throw new AssertionError("a reply of " + reply.length + " bytes taken");
            }
            return;
        }
        try {
            RemoteFirehoses.Mapping mapping = firehoses.acquire(peer, 0, 64);
            firehoses.release(mapping);
        } catch (Throwable e) {
            FuzzSupport.expectDocumented(e, DOCUMENTED, reply.length + 1);
            if (e.getMessage() != null && e.getMessage().contains("timed out")) {
                // Every request was answered with a whole reply: waiting out the timeout is a mis-decoded reply.
                throw new AssertionError("a delivered reply of " + reply.length + " bytes was waited out: " + e, e);
            }
        }
    }

    /** What a later request gets (after a BUSY): a refusal, so a fuzzed BUSY does not wait out the timeout. */
    private static byte[] refusal() {
        byte[] out = new byte[REPLY_LENGTH];
        MemorySegment.ofArray(out).set(ValueLayout.JAVA_INT_UNALIGNED, REP_STATUS_OFFSET, STATUS_TOO_MANY);
        return out;
    }

    /** Requests as RemoteFirehoses sends them and replies as FirehoseServer sends them. */
    @Test
    @EnabledIfSystemProperty(named = FuzzSupport.WRITE_SEEDS, matches = ".+")
    void writeSeeds() {
        Path dir = FuzzSupport.seedDirectory()
                .resolve("io/fabricrpc/transport/rdma/firehose/FirehoseMessagesFuzzTestInputs/messages");
        MemorySegment requests = MemorySegment.ofArray(new byte[1 + 2 * REQUEST_LENGTH]);
        for (int i = 0; i < 2; i++) {
            MemorySegment r = requests.asSlice(1 + (long) i * REQUEST_LENGTH, REQUEST_LENGTH);
            r.set(ValueLayout.JAVA_LONG_UNALIGNED, REQ_ID_OFFSET, i + 1);
            r.set(ValueLayout.JAVA_LONG_UNALIGNED, REQ_NEW_OFFSET, (long) (i + 1) * BUCKET);
            r.set(ValueLayout.JAVA_LONG_UNALIGNED, REQ_OLD_OFFSET, i == 0 ? -1 : BUCKET);
            r.set(ValueLayout.JAVA_INT_UNALIGNED, REQ_BUCKET_SIZE_OFFSET, BUCKET);
            r.set(ValueLayout.JAVA_INT_UNALIGNED, REQ_FIREHOSE_OFFSET, 0);
        }
        FuzzSupport.writeSeed(dir, "move-requests", requests.toArray(ValueLayout.JAVA_BYTE));
        MemorySegment reply = MemorySegment.ofArray(new byte[1 + REPLY_LENGTH]);
        reply.set(ValueLayout.JAVA_BYTE, 0, (byte) 1);
        MemorySegment body = reply.asSlice(1);
        body.set(ValueLayout.JAVA_LONG_UNALIGNED, REP_ID_OFFSET, 1);
        new RemoteRegion(1, 2, 0x10000, BUCKET, 7, RemoteAccess.WRITE).encode(body, REP_REGION_OFFSET);
        FuzzSupport.writeSeed(dir, "move-reply", reply.toArray(ValueLayout.JAVA_BYTE));
        body.set(ValueLayout.JAVA_INT_UNALIGNED, REP_STATUS_OFFSET, STATUS_BUSY);
        FuzzSupport.writeSeed(dir, "move-reply-busy", reply.toArray(ValueLayout.JAVA_BYTE));
    }
}
