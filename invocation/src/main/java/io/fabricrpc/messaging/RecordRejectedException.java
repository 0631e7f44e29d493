package io.fabricrpc.messaging;

import io.fabricrpc.api.MessagingException;

/**
 * Thrown by a {@link RecordHandler} for a record that leaves the rest of its channel untrustworthy (an unknown kind,
 * a record that cannot be decoded): the receiver drops the channel and tells the sender ({@link PoisonReason}).
 * Any other exception of a handler fails that call only.
 */
public final class RecordRejectedException extends MessagingException {
    private static final long serialVersionUID = 1L;

    private final PoisonReason reason;

    public RecordRejectedException(PoisonReason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    public PoisonReason reason() {
        return reason;
    }
}
