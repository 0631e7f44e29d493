package io.fabricrpc.messaging;

import io.fabricrpc.api.MessagingException;

/** A chunk's producer word or a record header is inconsistent; the sender's inbox stops accepting calls. */
public final class CorruptChunkException extends MessagingException {
    public CorruptChunkException(String message) {
        super(message);
    }
}
