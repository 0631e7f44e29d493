package io.fabricrpc.messaging;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The receiving side of every messenger aimed at one destination thread. That thread calls
 * {@link #processCalls} (Seriema's {@code process_calls}); the records of each sender arrive in the order sent.
 * Not thread-safe: one polling thread (the destination thread, or a handler thread standing in for it).
 */
public final class ReceivingThread {
    /** Receives failures of individual records or of a sender's whole inbox (corruption). */
    @FunctionalInterface
    public interface ErrorListener {
        void onError(long sender, Throwable error);
    }

    private final long threadId;
    final ConcurrentLinkedQueue<SenderInbox> arrivals = new ConcurrentLinkedQueue<>();
    private final List<SenderInbox> inboxes = new ArrayList<>();
    private ErrorListener errors = (sender, error) -> System.getLogger("fabricrpc.messaging")
            .log(System.Logger.Level.ERROR, "call from thread " + ThreadNames.of(sender) + " failed: " + error, error);
    private int recordsPerSender = 64;

    ReceivingThread(long threadId) {
        this.threadId = threadId;
    }

    public long threadId() {
        return threadId;
    }

    public void onError(ErrorListener listener) {
        this.errors = listener;
    }

    /**
     * Consumes the records that have arrived, at most a fair share per sender per call.
     *
     * @return the number of records handled
     */
    public int processCalls(RecordHandler handler) {
        for (SenderInbox arrived; (arrived = arrivals.poll()) != null; ) {
            inboxes.add(arrived);
        }
        int handled = 0;
        for (int i = 0, n = inboxes.size(); i < n; i++) {
            handled += inboxes.get(i).poll(handler, recordsPerSender, errors);
        }
        return handled;
    }

    /**
     * Records consumed so far from the channel {@code sender} (0 before its first chunk arrived): a call made by
     * another path after that many records on the channel must not run before them.
     */
    public long consumedFrom(long sender) {
        for (int i = 0, n = inboxes.size(); i < n; i++) {
            SenderInbox inbox = inboxes.get(i);
            if (inbox.sender() == sender) {
                return inbox.consumedRecords();
            }
        }
        return 0;
    }

    /** Chunks currently in the ring from {@code sender} (0 if none yet); for tests and memory reports. */
    public int chunksFrom(long sender) {
        for (SenderInbox inbox : inboxes) {
            if (inbox.sender() == sender) {
                return inbox.chunkCount();
            }
        }
        return 0;
    }

    void close() {
        for (SenderInbox arrived; (arrived = arrivals.poll()) != null; ) {
            inboxes.add(arrived);
        }
        inboxes.forEach(SenderInbox::close);
    }
}
