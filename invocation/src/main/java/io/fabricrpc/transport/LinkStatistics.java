package io.fabricrpc.transport;

/**
 * Counts a link keeps in its own fields for the counters file. Each method is an opaque (or stronger) load, callable
 * from any thread, that never allocates: the counters publisher calls them a few times a second.
 */
public interface LinkStatistics {
    /** Work requests posted (writes, reads, sends). */
    long loWritesPosted();

    /** Signaled send-queue completions reaped. */
    long loSignaledCompletions();

    /** Completions with an error status. */
    long loCompletionErrors();

    /** Completion-queue polls (one {@code ibv_poll_cq} each), or -1 where the link keeps no such count. */
    default long loCompletionQueuePolls() {
        return -1;
    }
}
