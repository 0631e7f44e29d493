package io.fabricrpc.messaging;

import io.fabricrpc.api.MessagingException;

import io.fabricrpc.api.MessengerConfig;

import io.fabricrpc.api.RemoteRegion;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The no-setup service call through which a sending thread obtains chunks in the receiving process (Seriema
 * §4.4.1): the service thread there allocates them and files them under (sender, destination thread), where
 * the destination thread's receiving messenger finds them, so the destination thread takes no part.
 *
 * <pre>
 * CHUNK_REQUEST, type {@value #CHUNK_REQUEST}:
 *  0            8                16               24       28           32                  72
 *  +------------+----------------+----------------+--------+------------+-------------------+---------------+
 *  | request id | sender thread  | dest thread    | count  | chunk size | notify region (40)| notify offset |
 *  +------------+----------------+----------------+--------+------------+-------------------+---------------+
 * CHUNK_REPLY, type {@value #CHUNK_REPLY}:
 *  0            8         12       16
 *  +------------+---------+--------+-----------------------------+
 *  | request id | status  | count  | count x chunk region (40)   |
 *  +------------+---------+--------+-----------------------------+
 *  status: 0 ok, 1 no such destination thread, 2 allocation failed, 3 malformed request, 4 over the per-inbox
 *  limit, 5 requester fenced, 6 no space for chunks (receiver out of room)
 * </pre>
 */
final class ChunkServiceMessages {
    static final int CHUNK_REQUEST = 0x4D450001;
    static final int CHUNK_REPLY = 0x4D450002;

    static final int REQ_ID = 0;
    static final int REQ_SENDER = 8;
    static final int REQ_DEST = 16;
    static final int REQ_COUNT = 24;
    static final int REQ_CHUNK_SIZE = 28;
    static final int REQ_NOTIFY_REGION = 32;
    static final int REQ_NOTIFY_OFFSET = REQ_NOTIFY_REGION + RemoteRegion.ENCODED_LENGTH;
    static final int REQUEST_LENGTH = REQ_NOTIFY_OFFSET + 8;

    static final int REP_ID = 0;
    static final int REP_STATUS = 8;
    static final int REP_COUNT = 12;
    static final int REP_REGIONS = 16;

    static final int STATUS_OK = 0;
    static final int STATUS_NO_SUCH_THREAD = 1;
    static final int STATUS_ALLOCATION_FAILED = 2;
    static final int STATUS_MALFORMED = 3;
    static final int STATUS_OVER_LIMIT = 4;
    static final int STATUS_FENCED = 5;
    /** The receiver's allocation failed for want of space (a full shm.dir, or a memory limit). */
    static final int STATUS_NO_SPACE = 6;
    /** Chunks one (sender, destination) inbox may hold: MessengerConfig's c_max bound. */
    static final int MAX_CHUNKS_PER_INBOX = 255;
    /** Chunks one request may ask for: MessengerConfig's bound on c (a reply must fit one two-sided message). */
    static final int MAX_CHUNKS_PER_REQUEST = 64;

    private ChunkServiceMessages() {
    }

    static int replyLength(int count) {
        return REP_REGIONS + count * RemoteRegion.ENCODED_LENGTH;
    }

    /**
     * Whether a CHUNK_REQUEST can be served: its length, count, chunk size and notification handle are in range
     * (the serving node adds what depends on its state).
     */
    static boolean wellFormedRequest(MemorySegment request) {
        if (request.byteSize() != REQUEST_LENGTH) {
            return false;
        }
        int count = request.get(ValueLayout.JAVA_INT_UNALIGNED, REQ_COUNT);
        int chunkSize = request.get(ValueLayout.JAVA_INT_UNALIGNED, REQ_CHUNK_SIZE);
        if (count < 1 || count > MAX_CHUNKS_PER_REQUEST || chunkSize < ChunkLayout.MIN_CHUNK_SIZE
                || chunkSize > ChunkLayout.MAX_CHUNK_SIZE || chunkSize % 64 != 0) {
            return false;
        }
        try {
            RemoteRegion.decode(request, REQ_NOTIFY_REGION);
            return true;
        } catch (IllegalArgumentException e) {
            return false; // a corrupt access field
        }
    }

    /** The status of a CHUNK_REPLY; a reply too short to hold one is a {@link MessagingException} naming its size. */
    static int replyStatus(MemorySegment reply) {
        if (reply.byteSize() < REP_REGIONS) {
            throw new MessagingException("malformed chunk reply of " + reply.byteSize() + " bytes, at least "
                    + REP_REGIONS + " expected");
        }
        return reply.get(ValueLayout.JAVA_INT_UNALIGNED, REP_STATUS);
    }

    /**
     * The chunks a CHUNK_REPLY with status OK grants for a request of {@code requested}; a count outside
     * [1, requested], a length that does not match it or a corrupt handle is a {@link MessagingException}.
     */
    static RemoteRegion[] replyChunks(MemorySegment reply, int requested) {
        int granted = reply.byteSize() >= REP_REGIONS ? reply.get(ValueLayout.JAVA_INT_UNALIGNED, REP_COUNT) : -1;
        if (granted < 1 || granted > requested || reply.byteSize() != replyLength(granted)) {
            throw new MessagingException("malformed chunk reply: " + granted + " chunks in " + reply.byteSize()
                    + " bytes for a request of " + requested);
        }
        RemoteRegion[] chunks = new RemoteRegion[granted];
        for (int i = 0; i < granted; i++) {
            try {
                chunks[i] = RemoteRegion.decode(reply, REP_REGIONS + (long) i * RemoteRegion.ENCODED_LENGTH);
            } catch (IllegalArgumentException e) {
                throw new MessagingException("malformed chunk reply: chunk " + i + ": " + e.getMessage());
            }
        }
        return chunks;
    }

    static String status(int status) {
        return switch (status) {
            case STATUS_OK -> "ok";
            case STATUS_NO_SUCH_THREAD -> "no such destination thread";
            case STATUS_ALLOCATION_FAILED -> "allocation failed";
            case STATUS_NO_SPACE -> "no space for chunks in the receiving process (its shm.dir is full, or a memory limit"
                    + " is reached)";
            case STATUS_MALFORMED -> "malformed request";
            case STATUS_FENCED -> "the job declared the requesting process failed (fenced)";
            case STATUS_OVER_LIMIT -> "more chunks than one sender may hold (" + MAX_CHUNKS_PER_INBOX + ")";
            default -> "unknown status " + status;
        };
    }
}
