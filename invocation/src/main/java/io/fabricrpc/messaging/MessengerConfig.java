package io.fabricrpc.messaging;

import java.time.Duration;

/**
 * Messenger settings (Seriema's defaults: c = 2 chunks per allocation, c_max = 16). Memory per messenger is
 * bounded by {@code cMax × chunkSize} at the receiver plus one chunk of staging at the sender.
 */
public record MessengerConfig(int chunkSize, int c, int cMax, FullPolicy fullPolicy, Duration timeout,
                              long asyncQueueLimitBytes, Duration publicationDelay, boolean coalescing) {
    /** How long a call may stay written but unpublished by default (transports without a mapped window only). */
    public static final Duration DEFAULT_PUBLICATION_DELAY = Duration.ofNanos(500_000);

    public MessengerConfig(int chunkSize, int c, int cMax, FullPolicy fullPolicy, Duration timeout,
                           long asyncQueueLimitBytes) {
        this(chunkSize, c, cMax, fullPolicy, timeout, asyncQueueLimitBytes, DEFAULT_PUBLICATION_DELAY, true);
    }

    public MessengerConfig {
        if (publicationDelay.isNegative() || publicationDelay.compareTo(Duration.ofSeconds(1)) > 0) {
            throw new IllegalArgumentException("publicationDelay must be in [0, 1 s], got " + publicationDelay);
        }
        if (chunkSize < ChunkLayout.MIN_CHUNK_SIZE || chunkSize % 64 != 0 || chunkSize > ChunkLayout.MAX_CHUNK_SIZE) {
            throw new IllegalArgumentException("chunkSize must be a multiple of 64 in [" + ChunkLayout.MIN_CHUNK_SIZE
                    + ", " + ChunkLayout.MAX_CHUNK_SIZE + "], got " + chunkSize);
        }
        if (c < 1 || cMax < c || cMax > 255 || c > 64) {
            throw new IllegalArgumentException("need 1 <= c <= cMax <= 255 (and c <= 64), got c = " + c
                    + ", cMax = " + cMax);
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
    }

    /** 64 KiB chunks, c = 2, c_max = 16, RETRY, 30 s, 16 MiB of asynchronous queue. */
    public static MessengerConfig defaults() {
        return new MessengerConfig(64 * 1024, 2, 16, FullPolicy.RETRY, Duration.ofSeconds(30), 16 << 20);
    }

    public MessengerConfig withChunks(int chunkSize, int newC, int newCMax) {
        return new MessengerConfig(chunkSize, newC, newCMax, fullPolicy, timeout, asyncQueueLimitBytes,
                publicationDelay, coalescing);
    }

    public MessengerConfig withFullPolicy(FullPolicy policy) {
        return new MessengerConfig(chunkSize, c, cMax, policy, timeout, asyncQueueLimitBytes,
                publicationDelay, coalescing);
    }

    public MessengerConfig withTimeout(Duration newTimeout) {
        return new MessengerConfig(chunkSize, c, cMax, fullPolicy, newTimeout, asyncQueueLimitBytes,
                publicationDelay, coalescing);
    }

    /**
     * Over a transport without a mapped window (RDMA), how long a call's flag may wait for the next call to carry it:
     * {@code ZERO} publishes every call at once (two WRITEs a call), a positive delay lets a stream of calls go out as
     * one WRITE each. See {@link Messenger}'s deferred publication.
     */
    public MessengerConfig withPublicationDelay(Duration delay) {
        return new MessengerConfig(chunkSize, c, cMax, fullPolicy, timeout, asyncQueueLimitBytes, delay, coalescing);
    }

    /**
     * Over a transport without a mapped window, whether calls made while the link is backlogged (its writes queue in
     * front of the device, {@link io.fabricrpc.transport.Link#isBacklogged}) are held and go out together with the
     * next call's WRITE, as TCP's autocorking does: one WRITE then carries every call made while the previous ones
     * were still queued. Calls on an idle link still go out at once; a held call waits at most
     * {@link #publicationDelay}. Needs a positive publication delay; on by default.
     */
    public MessengerConfig withCoalescing(boolean enabled) {
        return new MessengerConfig(chunkSize, c, cMax, fullPolicy, timeout, asyncQueueLimitBytes, publicationDelay,
                enabled);
    }

    /** The largest payload one call may carry. */
    public long maxPayload() {
        return ChunkLayout.maxPayload(chunkSize);
    }
}
