package io.fabricrpc.messaging;

/**
 * Why a receiver dropped a sender's channel: the code it writes into the channel's poison word ({@link ChunkLayout},
 * notification slot). Codes are wire values: never renumber one.
 */
public enum PoisonReason {
    /** A record header without its length marks, of length 0, or claiming bytes past the chunk. */
    CORRUPT_RECORD(1),
    /** A call record named a function id the channel never defined. */
    UNKNOWN_FUNCTION(2),
    /** A record carried an invocation kind (tag) the receiver does not know. */
    UNKNOWN_KIND(3),
    /** Pushing a consumed count back to the sender failed: the channel can no longer advance. */
    PUSH_FAILED(4),
    /** A call record could not be decoded: the channel's stream of definitions is no longer trusted. */
    DECODE_ERROR(5),
    /** A chunk's sequence words disagree with the records the receiver counted: records were lost or repeated. */
    SEQUENCE_GAP(6),
    /** A seal announced chunks that were never allocated. */
    BAD_SEAL(7),
    /** Reading the sender's chunk faulted: its memory is gone (the chunk's file was truncated or removed). */
    MEMORY_FAULT(8);

    private final int code;

    PoisonReason(int code) {
        this.code = code;
    }

    /** The wire code (1..127; 0 means the channel is open). */
    public int code() {
        return code;
    }

    /** The reason of {@code code}, or null for a code this version does not know. */
    public static PoisonReason of(int code) {
        for (PoisonReason reason : values()) {
            if (reason.code == code) {
                return reason;
            }
        }
        return null;
    }
}
