package io.fabricrpc.serialization;

/**
 * A function of the destination thread's context arrived at a thread whose context is missing or of another type;
 * the function was not invoked. The message names the function, the expected type, the link (and so the
 * destination) and what the destination has instead.
 */
public class WrongContextException extends CallDecodingException {
    private static final long serialVersionUID = 1L;

    public WrongContextException(String message, long offset, long limit, long recordEnd) {
        super(message, offset, limit, recordEnd);
    }
}
