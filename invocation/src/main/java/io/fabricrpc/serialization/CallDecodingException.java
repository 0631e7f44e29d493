package io.fabricrpc.serialization;

/**
 * A call or result record could not be decoded: malformed, truncated, unknown function id, or a refused definition.
 * The decoder that threw it stays usable; when {@link #recordEnd()} is not -1 the reader may continue with the next
 * record at that offset, otherwise the rest of the chunk cannot be delimited and must be dropped.
 */
public class CallDecodingException extends SerializationException {
    private static final long serialVersionUID = 1L;

    private final long offset;
    private final long limit;
    private final long recordEnd;

    public CallDecodingException(String message, long offset, long limit, long recordEnd) {
        this(message, offset, limit, recordEnd, null);
    }

    public CallDecodingException(String message, long offset, long limit, long recordEnd, Throwable cause) {
        super(message + " [record at offset " + offset + ", limit " + limit
                + (recordEnd >= 0 ? ", record ends at " + recordEnd : ", record end unknown") + "]", cause);
        this.offset = offset;
        this.limit = limit;
        this.recordEnd = recordEnd;
    }

    /** Offset of the offending record in its segment. */
    public long offset() {
        return offset;
    }

    /** Limit the record was read against. */
    public long limit() {
        return limit;
    }

    /** Offset just past the offending record, or -1 when its header is unreadable. */
    public long recordEnd() {
        return recordEnd;
    }
}
