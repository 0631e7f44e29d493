package io.fabricrpc.transport;

import java.lang.foreign.MemorySegment;

/** Receives two-sided messages from {@link Transport#pollMessages}. */
@FunctionalInterface
public interface MessageHandler {
    /**
     * @param from    the link to the sender (created on demand), usable to reply
     * @param type    the sender's message type
     * @param payload the message bytes, valid only during this call
     */
    void onMessage(Link from, int type, MemorySegment payload);
}
