package io.fabricrpc.messaging;

import io.fabricrpc.api.MessengerConfig;

import io.fabricrpc.api.RemoteRegion;

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
 *  status: 0 ok, 1 no such destination thread, 2 allocation failed, 3 malformed request
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
    /** Chunks one (sender, destination) inbox may hold: MessengerConfig's c_max bound. */
    static final int MAX_CHUNKS_PER_INBOX = 255;
    /** Chunks one request may ask for: MessengerConfig's bound on c (a reply must fit one two-sided message). */
    static final int MAX_CHUNKS_PER_REQUEST = 64;

    private ChunkServiceMessages() {
    }

    static int replyLength(int count) {
        return REP_REGIONS + count * RemoteRegion.ENCODED_LENGTH;
    }

    static String status(int status) {
        return switch (status) {
            case STATUS_OK -> "ok";
            case STATUS_NO_SUCH_THREAD -> "no such destination thread";
            case STATUS_ALLOCATION_FAILED -> "allocation failed";
            case STATUS_MALFORMED -> "malformed request";
            case STATUS_FENCED -> "the job declared the requesting process failed (fenced)";
            case STATUS_OVER_LIMIT -> "more chunks than one sender may hold (" + MAX_CHUNKS_PER_INBOX + ")";
            default -> "unknown status " + status;
        };
    }
}
