package io.fabricrpc.transport.rdma.firehose;

import io.fabricrpc.api.RemoteRegion;

/**
 * The firehose move service call (Firehose §3.1 step 2-3), two-sided over {@link io.fabricrpc.transport.Link#send}:
 * a requester asks the peer that owns an exposed segment to pin one bucket of it for the requester's writes and to
 * release the bucket that mapping held before. The peer's reply carries the bucket's remote region. Both ends use
 * these constants. Fields are little-endian; offsets are relative to the peer's exposed segment.
 *
 * <pre>
 * MOVE_REQUEST, type 0x4D460001 ('M' 'F' 1), {@value #REQUEST_LENGTH} bytes:
 *  0            8              16             24            28           32
 *  +------------+--------------+--------------+-------------+------------+
 *  | request id | new offset   | old offset   | bucket size | firehose   |
 *  +------------+--------------+--------------+-------------+------------+
 *  new offset: bucket-aligned offset to pin; old offset: the bucket that firehose held, -1 for none;
 *  firehose: the requester's mapping slot (0..F-1). The peer keeps its pins per (requester, firehose), so requests
 *  of different firehoses may arrive in any order (two requester threads race to send) and still agree.
 * MOVE_REPLY, type 0x4D460002, {@value #REPLY_LENGTH} bytes:
 *  0            8        12           16                           56
 *  +------------+--------+------------+----------------------------+
 *  | request id | status | reserved 0 | remote region (40 bytes)   |
 *  +------------+--------+------------+----------------------------+
 *  region: the pinned bucket (address, rkey, length = bucket size, WRITE), all zero unless status is OK
 * </pre>
 */
public final class FirehoseMessages {
    public static final int MOVE_REQUEST = 0x4D460001;
    public static final int MOVE_REPLY = 0x4D460002;

    public static final int REQ_ID_OFFSET = 0;
    public static final int REQ_NEW_OFFSET = 8;
    public static final int REQ_OLD_OFFSET = 16;
    public static final int REQ_BUCKET_SIZE_OFFSET = 24;
    public static final int REQ_FIREHOSE_OFFSET = 28;
    public static final int REQUEST_LENGTH = 32;

    public static final int REP_ID_OFFSET = 0;
    public static final int REP_STATUS_OFFSET = 8;
    public static final int REP_REGION_OFFSET = 16;
    public static final int REPLY_LENGTH = REP_REGION_OFFSET + RemoteRegion.ENCODED_LENGTH;

    /** Pinned; the region is valid until a later move releases it. */
    public static final int STATUS_OK = 0;
    /** The peer's cache is at its bound right now (the old bucket was released all the same): retry later. */
    public static final int STATUS_BUSY = 1;
    /** The range is outside the exposed segment or not bucket-aligned. */
    public static final int STATUS_OUT_OF_RANGE = 2;
    /** The requester's bucket size differs from the peer's. */
    public static final int STATUS_BAD_BUCKET_SIZE = 3;
    /** The requester named a firehose outside the {@code F} this peer grants each requester. */
    public static final int STATUS_TOO_MANY = 4;
    /** The old offset is not a bucket this requester holds. */
    public static final int STATUS_NOT_HELD = 5;
    /** The peer's device refused to register the bucket. */
    public static final int STATUS_FAILED = 6;
    /** The request was shorter than {@link #REQUEST_LENGTH}. */
    public static final int STATUS_MALFORMED = 7;

    /** Never sent: the requester's verdict on a reply it cannot decode (negative status, corrupt region handle). */
    public static final int STATUS_MALFORMED_REPLY = 8;

    private FirehoseMessages() {
    }

    public static String statusName(int status) {
        return switch (status) {
            case STATUS_OK -> "ok";
            case STATUS_BUSY -> "busy (peer cache at its bound)";
            case STATUS_OUT_OF_RANGE -> "out of the exposed range";
            case STATUS_BAD_BUCKET_SIZE -> "bucket size mismatch";
            case STATUS_TOO_MANY -> "firehose number beyond the peer's F";
            case STATUS_NOT_HELD -> "old bucket not held";
            case STATUS_FAILED -> "registration failed";
            case STATUS_MALFORMED -> "malformed request";
            case STATUS_MALFORMED_REPLY -> "malformed reply";
            default -> "unknown status " + status;
        };
    }
}
