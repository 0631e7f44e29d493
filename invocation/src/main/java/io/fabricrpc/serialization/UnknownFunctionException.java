package io.fabricrpc.serialization;

/**
 * A call record names a function id for which no definition was accepted on this link, either because none was
 * received or because it was refused ({@link FunctionNotAllowedException}).
 */
public final class UnknownFunctionException extends CallDecodingException {
    private static final long serialVersionUID = 1L;

    private final int functionId;

    public UnknownFunctionException(String message, int functionId, long offset, long limit, long recordEnd) {
        super(message, offset, limit, recordEnd);
        this.functionId = functionId;
    }

    /** The function id read from the record. */
    public int functionId() {
        return functionId;
    }
}
