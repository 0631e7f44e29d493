package io.fabricrpc.counters;

/** Type ids of the counters in a counters file (Agrona's type id field), for grouping and for {@code fabricrpc stat}. */
public final class CounterTypes {
    public static final int CALLS_SENT = 1;
    public static final int BYTES_SENT = 2;
    public static final int CHUNKS_HELD = 3;
    public static final int RING_FULL = 4;
    public static final int RETRY_WAITS = 5;
    public static final int AGGREGATION_BATCHES = 6;
    public static final int AGGREGATION_FLUSHES = 7;
    public static final int AGGREGATION_PUSH_OUTS = 8;
    public static final int ASYNC_QUEUE_BYTES = 9;
    public static final int CALLS_RUN = 10;
    public static final int WRITES_POSTED = 11;
    public static final int SIGNALED_COMPLETIONS = 12;
    public static final int COMPLETION_ERRORS = 13;
    public static final int REGISTRATION_HITS = 14;
    public static final int REGISTRATION_MISSES = 15;
    public static final int HEARTBEATS_SENT = 16;
    public static final int HEARTBEATS_RECEIVED = 17;
    public static final int PEER_FAILURES = 18;
    public static final int COUNTERS_DROPPED = 19;
    /** The largest type id. */
    public static final int MAX_TYPE = COUNTERS_DROPPED;

    private static final String[] NAMES = {null, "CallsSent", "BytesSent", "ChunksHeld", "RingFullEvents",
            "RetryWaits", "AggregationBatches", "AggregationFlushes", "AggregationPushOuts", "AsyncQueueBytes",
            "CallsRun", "WritesPosted", "SignaledCompletions", "CompletionErrors", "RegistrationHits",
            "RegistrationMisses", "HeartbeatsSent", "HeartbeatsReceived", "PeerFailures", "CountersDropped"};

    private CounterTypes() {
    }

    /** The type's name as a JMX attribute, e.g. {@code CallsSent}. */
    public static String name(int typeId) {
        return NAMES[typeId];
    }

    /** True for a level that may go down (chunks held, queued bytes); every other type only counts up. */
    public static boolean isGauge(int typeId) {
        return typeId == CHUNKS_HELD || typeId == ASYNC_QUEUE_BYTES;
    }

    /** A thread id packed as rank << 32 | index ({@code ThreadId.pack}), as {@code rank/index}; views as {@code +vN}. */
    public static String thread(long packed) {
        int rank = (int) (packed >>> 32);
        int index = (int) packed;
        int view = index >>> 20;
        return rank + "/" + (index & 0xFFFFF) + (view == 0 ? "" : " view " + view);
    }

    /** {@code sender -> destination}, both packed thread ids. */
    public static String channel(long sender, long destination) {
        return thread(sender) + " -> " + thread(destination);
    }
}
