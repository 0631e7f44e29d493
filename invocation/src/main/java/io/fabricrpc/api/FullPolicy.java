package io.fabricrpc.api;

/** What a messenger does with a call when every chunk up to {@code cMax} is full (Seriema §4.4.1). */
public enum FullPolicy {
    /** The call returns {@code false}; nothing is sent. */
    FAIL,
    /** The call waits until the receiver frees a chunk (bounded by the peer's liveness and a timeout). */
    RETRY,
    /**
     * The call is copied into a local queue and sent later, in order, by the sender's next call, flush or wait, or by
     * the fabric's agent: a channel over a FAIL messenger ({@link io.fabricrpc.messaging.AsyncQueueChannel},
     * {@link io.fabricrpc.messaging.MessagingNode#channel}).
     */
    RETRY_ASYNC
}
