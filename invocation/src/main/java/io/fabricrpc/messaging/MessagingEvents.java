package io.fabricrpc.messaging;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;

/**
 * JFR events of the sending path's slow paths, never of a call: a ring that grows, a RETRY send that waits for room.
 * Disabled events cost a check of a static flag. Read them with {@code jfr print --events 'fabricrpc.*' file.jfr}.
 */
public final class MessagingEvents {
    private MessagingEvents() {
    }

    @Name("fabricrpc.ChunkGrowth")
    @Label("Chunk ring growth")
    @Category({"fabricrpc", "Messaging"})
    @Description("A messenger obtained more chunks from its receiver (its ring was full up to the next chunk)")
    public static final class ChunkGrowth extends Event {
        @Label("Sender thread")
        public String sender;
        @Label("Destination thread")
        public String destination;
        @Label("Chunks added")
        public int added;
        @Label("Chunks now")
        public int chunks;
        @Label("Maximum chunks (cMax)")
        public int cMax;
    }

    @Name("fabricrpc.RingFull")
    @Label("Ring full, RETRY wait")
    @Category({"fabricrpc", "Messaging"})
    @Description("A RETRY send found every chunk up to cMax full and waited for the receiver to free one")
    public static final class RingFull extends Event {
        @Label("Sender thread")
        public String sender;
        @Label("Destination thread")
        public String destination;
        @Label("Chunks")
        public int chunks;
        @Label("Timed out")
        public boolean timedOut;
    }
}
