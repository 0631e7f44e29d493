package io.fabricrpc.messaging;

import io.fabricrpc.api.MessagingException;

/** A chunk's producer word, a record header or a chunk's sequence is inconsistent; the sender's channel is dropped. */
public final class CorruptChunkException extends MessagingException {
    private static final long serialVersionUID = 1L;

    private final PoisonReason reason;
    private final String detail;

    public CorruptChunkException(String message) {
        this(PoisonReason.CORRUPT_RECORD, message, message);
    }

    /** {@code detail}: what is wrong, in fewer words than {@code message} (the sender is told it). */
    public CorruptChunkException(PoisonReason reason, String message, String detail) {
        super(message);
        this.reason = reason;
        this.detail = detail;
    }

    public String detail() {
        return detail;
    }

    /** What the receiver tells the sender. */
    public PoisonReason reason() {
        return reason;
    }
}
