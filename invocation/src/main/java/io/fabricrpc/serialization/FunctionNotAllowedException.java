package io.fabricrpc.serialization;

import io.fabricrpc.api.SerializationRegistry;

/**
 * A function definition was refused: its capturing class is not allowed by the {@link SerializationRegistry}, or
 * the definition does not match a serializable lambda or method reference compiled into that class, or its
 * functional interface is not one of the {@code io.fabricrpc.api} shapes. Thrown by the receiver when the
 * definition arrives (and by the sender, early, for a capturing class its own registry does not allow).
 */
public final class FunctionNotAllowedException extends CallDecodingException {
    private static final long serialVersionUID = 1L;

    private final String capturingClass;

    public FunctionNotAllowedException(String message, String capturingClass, long offset, long limit,
                                       long recordEnd, Throwable cause) {
        super(message, offset, limit, recordEnd, cause);
        this.capturingClass = capturingClass;
    }

    /** Binary name of the capturing class named by the definition. */
    public String capturingClass() {
        return capturingClass;
    }
}
