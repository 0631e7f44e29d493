package io.fabricrpc.memory;

import io.fabricrpc.api.RemoteRegion;

/**
 * The no-setup service messages of {@link RemoteAllocationService}, little-endian (native order on x86), sent with
 * {@link io.fabricrpc.transport.Link#send}.
 *
 * <pre>
 * ALLOCATE_REQUEST, type {@value #ALLOCATE_REQUEST}, {@value #ALLOCATE_REQUEST_LENGTH} bytes:
 *  0            8            16       20        24
 *  +------------+------------+--------+---------+
 *  | request id | bytes      | access | (zero)  |
 *  +------------+------------+--------+---------+
 *  access: RemoteAccess ordinal the requester asks for (WRITE, READ or READ_WRITE)
 *
 * ALLOCATE_REPLY, type {@value #ALLOCATE_REPLY}, {@value #REPLY_LENGTH} bytes; FREE_REPLY, type {@value #FREE_REPLY}, same:
 *  0            8        12       16           24           32                   72
 *  +------------+--------+--------+------------+------------+--------------------+
 *  | request id | status | (zero) | limit      | in use     | region (40)        |
 *  +------------+--------+--------+------------+------------+--------------------+
 *  limit, in use: the owner's remote-allocation limit and bytes granted when it answered (for refusals)
 *  region:        the granted region's handle (ALLOCATE_REPLY with status OK; zero otherwise)
 *
 * FREE_REQUEST, type {@value #FREE_REQUEST}, {@value #FREE_REQUEST_LENGTH} bytes:
 *  0            8                    48
 *  +------------+--------------------+
 *  | request id | region (40)        |
 *  +------------+--------------------+
 * </pre>
 */
final class RemoteAllocationMessages {
    static final int ALLOCATE_REQUEST = 0x4D4D0001;
    static final int ALLOCATE_REPLY = 0x4D4D0002;
    static final int FREE_REQUEST = 0x4D4D0003;
    static final int FREE_REPLY = 0x4D4D0004;

    static final int REQUEST_ID = 0;

    static final int ALLOC_BYTES = 8;
    static final int ALLOC_ACCESS = 16;
    static final int ALLOCATE_REQUEST_LENGTH = 24;

    static final int FREE_REGION = 8;
    static final int FREE_REQUEST_LENGTH = FREE_REGION + RemoteRegion.ENCODED_LENGTH;

    static final int REPLY_STATUS = 8;
    static final int REPLY_LIMIT = 16;
    static final int REPLY_IN_USE = 24;
    static final int REPLY_REGION = 32;
    static final int REPLY_LENGTH = REPLY_REGION + RemoteRegion.ENCODED_LENGTH;

    static final int STATUS_OK = 0;
    static final int STATUS_OVER_LIMIT = 1;
    static final int STATUS_ALLOCATION_FAILED = 2;
    static final int STATUS_MALFORMED = 3;
    static final int STATUS_UNKNOWN_REGION = 4;

    private RemoteAllocationMessages() {
    }

    static String status(int status) {
        return switch (status) {
            case STATUS_OK -> "ok";
            case STATUS_OVER_LIMIT -> "over the remote-allocation limit";
            case STATUS_ALLOCATION_FAILED -> "allocation failed";
            case STATUS_MALFORMED -> "malformed request";
            case STATUS_UNKNOWN_REGION -> "region unknown (never granted to the requester, or freed already)";
            default -> "unknown status " + status;
        };
    }
}
