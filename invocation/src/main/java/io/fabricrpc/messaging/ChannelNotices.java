package io.fabricrpc.messaging;

import io.fabricrpc.transport.CounterSlot;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.RemoteRegion;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;

/**
 * What a receiver tells one sender besides its consumed counts ({@link ChunkLayout}, notification slot): the poison
 * word with its text, and the failed-records count with the latest failure's text. An instance is the writer, owned
 * by the destination thread (one per inbox); the static methods read the slot in the sender's memory.
 *
 * <p>Invariant: the poison word is written once, after its text, by one inline write whose first byte (the reason
 * code) lands last; failure text {@code n} goes to slot {@code n & 1} before count {@code n} is pushed, so the slot a
 * reader finds named by the count twice is whole (failure {@code n + 2} starts after count {@code n + 1} landed).
 */
final class ChannelNotices {
    private static final VarHandle BYTE = ValueLayout.JAVA_BYTE.varHandle();
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle(); // 8-aligned in the slot

    private final Link link;
    private final RemoteRegion region;
    private final long offset;
    private final CounterSlot.Writer failures;
    // Native like every source the links copy from (CounterSlot.Writer's image).
    private final MemorySegment image = Arena.ofAuto().allocate(ChunkLayout.NOTIFY_TEXT_LENGTH, 8);
    private boolean poisoned;

    ChannelNotices(Link link, RemoteRegion region, long offset) {
        this.link = link;
        this.region = region;
        this.offset = offset;
        this.failures = new CounterSlot.Writer(link, region, offset + ChunkLayout.NOTIFY_FAILURES_OFFSET);
    }

    /** Writes the poison word, once: the sender's next call fails with {@code reason}, {@code ran} and the text. */
    void poison(PoisonReason reason, long ran, String text) {
        if (poisoned) {
            return;
        }
        poisoned = true;
        writeText(ChunkLayout.NOTIFY_POISON_TEXT_OFFSET, text);
        image.fill((byte) 0);
        image.set(ValueLayout.JAVA_BYTE, 0, (byte) reason.code());
        image.set(ValueLayout.JAVA_LONG_UNALIGNED, ChunkLayout.POISON_RAN_OFFSET, ran);
        // Ordered after the text (link order); the code byte lands last, so a reader that sees it sees the rest.
        link.writePublishedInline(image, 0, region, offset + ChunkLayout.NOTIFY_POISON_OFFSET,
                ChunkLayout.POISON_WORD_LENGTH);
    }

    boolean poisoned() {
        return poisoned;
    }

    /** The {@code count}-th notifying record failed: its text, then the count, both before its consumed count. */
    void failed(long count, String text) {
        writeText(ChunkLayout.NOTIFY_FAILURE_TEXT_OFFSET + (count & 1) * ChunkLayout.NOTIFY_TEXT_LENGTH, text);
        failures.publish(count);
    }

    private void writeText(long at, String text) {
        byte[] bytes = fit(text, ChunkLayout.NOTIFY_TEXT_LENGTH - 1).getBytes(StandardCharsets.UTF_8);
        int length = bytes.length;
        image.fill((byte) 0);
        image.set(ValueLayout.JAVA_BYTE, 0, (byte) length);
        MemorySegment.copy(MemorySegment.ofArray(bytes), 0, image, 1, length);
        for (int piece = 0; piece < length + 1; piece += Link.MAX_INLINE_LENGTH) {
            link.writePublishedInline(image, piece, region, offset + at + piece,
                    Math.min(Link.MAX_INLINE_LENGTH, ChunkLayout.NOTIFY_TEXT_LENGTH - piece));
        }
    }

    /**
     * {@code text}, or if its UTF-8 is longer than {@code maxBytes} its start and its end joined by "...": the
     * class comes first and the reason last, so both survive.
     */
    static String fit(String text, int maxBytes) {
        int over = text.getBytes(StandardCharsets.UTF_8).length - maxBytes;
        int keep = text.length();
        String fitted = text;
        while (over > 0) {
            keep = Math.max(0, keep - Math.max(over, 1) - 3);
            int head = keep / 2;
            int tail = text.length() - (keep - head);
            if (head > 0 && Character.isHighSurrogate(text.charAt(head - 1))) {
                head--; // never split a surrogate pair
            }
            if (tail < text.length() && Character.isLowSurrogate(text.charAt(tail))) {
                tail++;
            }
            fitted = text.substring(0, head) + "..." + text.substring(tail);
            over = fitted.getBytes(StandardCharsets.UTF_8).length - maxBytes;
        }
        return fitted;
    }

    /** Sender side: the poison word's reason code in {@code word} (the 1-byte slice at its start), 0 while open. */
    static int reasonCode(MemorySegment word) {
        return (byte) BYTE.getAcquire(word, 0L) & 0xFF; // pairs with the code byte landing last
    }

    /** Sender side: the exception for a poisoned channel whose notification slot is at {@code offset}. */
    static ChannelPoisonedException poisoned(MemorySegment notify, long offset, long sender, long receiver,
                                             long accepted) {
        int code = (byte) BYTE.getAcquire(notify, offset + ChunkLayout.NOTIFY_POISON_OFFSET) & 0xFF;
        long ran = (long) LONG.getAcquire(notify, offset + ChunkLayout.NOTIFY_POISON_OFFSET + ChunkLayout.POISON_RAN_OFFSET);
        return new ChannelPoisonedException(sender, receiver, code, ran, accepted,
                text(notify, offset + ChunkLayout.NOTIFY_POISON_TEXT_OFFSET));
    }

    /** Sender side: notifying records whose handler threw, as of the receiver's latest push (at least {@code known}). */
    static long failures(MemorySegment notify, long offset, long known) {
        return CounterSlot.read(notify, offset + ChunkLayout.NOTIFY_FAILURES_OFFSET, known);
    }

    /** Sender side: the latest failure's text, or "" if it was being rewritten on every look. */
    static String latestFailure(MemorySegment notify, long offset) {
        for (int attempt = 0; attempt < 4; attempt++) {
            long count = failures(notify, offset, 0);
            String text = text(notify, offset + ChunkLayout.NOTIFY_FAILURE_TEXT_OFFSET
                    + (count & 1) * ChunkLayout.NOTIFY_TEXT_LENGTH);
            if (count == failures(notify, offset, 0)) {
                return text;
            }
        }
        return "";
    }

    private static String text(MemorySegment notify, long at) {
        int length = Math.min((byte) BYTE.getAcquire(notify, at) & 0xFF, ChunkLayout.NOTIFY_TEXT_LENGTH - 1);
        byte[] bytes = new byte[length];
        MemorySegment.copy(notify, ValueLayout.JAVA_BYTE, at + 1, bytes, 0, length);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
