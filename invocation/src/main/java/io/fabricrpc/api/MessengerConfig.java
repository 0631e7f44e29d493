package io.fabricrpc.api;

import java.time.Duration;

/**
 * Messenger settings (Seriema's defaults: c = 2 chunks per allocation, c_max = 16). Memory per messenger is
 * bounded by {@code cMax × chunkSize} at the receiver plus one chunk of staging at the sender.
 *
 * @param chunkSize bytes of each chunk, a multiple of 64 in [{@value #MIN_CHUNK_SIZE}, {@value #MAX_CHUNK_SIZE}]
 * @param c chunks requested from the receiver at a time (at set-up and on each growth), in [1, 64] and at most
 *        {@code cMax}
 * @param cMax most chunks a messenger holds at the receiver, in [{@code c}, 255]
 * @param fullPolicy what a call does when every chunk up to {@code cMax} is full
 * @param timeout the longest wait for room (a free chunk under {@link FullPolicy#RETRY}, a flush) or for the
 *        receiver to grant chunks; positive
 * @param asyncQueueLimitBytes most bytes a {@link FullPolicy#RETRY_ASYNC} channel queues locally; a call beyond it
 *        fails with a {@link MessagingException}, it is never dropped
 * @param publicationDelay over a transport without a mapped window, how long a call may stay written but
 *        unpublished, in [0, 1 s] (see {@link #withPublicationDelay})
 * @param coalescing over a transport without a mapped window, whether calls made while the link is backlogged go
 *        out together (see {@link #withCoalescing})
 */
public record MessengerConfig(int chunkSize, int c, int cMax, FullPolicy fullPolicy, Duration timeout,
                              long asyncQueueLimitBytes, Duration publicationDelay, boolean coalescing) {
    /** Smallest chunk: a page. */
    public static final int MIN_CHUNK_SIZE = 4096;
    /** Largest chunk (16 MiB): what one remote allocation of the chunk service may grant. */
    public static final int MAX_CHUNK_SIZE = 1 << 24;

    /** How long a call may stay written but unpublished by default (transports without a mapped window only). */
    public static final Duration DEFAULT_PUBLICATION_DELAY = Duration.ofNanos(500_000);

    /**
     * Settings with the default publication delay ({@link #DEFAULT_PUBLICATION_DELAY}) and coalescing on.
     *
     * @param chunkSize bytes of each chunk, a multiple of 64 in [{@value #MIN_CHUNK_SIZE}, {@value #MAX_CHUNK_SIZE}]
     * @param c chunks requested from the receiver at a time, in [1, 64] and at most {@code cMax}
     * @param cMax most chunks a messenger holds at the receiver, in [{@code c}, 255]
     * @param fullPolicy what a call does when every chunk up to {@code cMax} is full
     * @param timeout the longest wait for room or for the receiver to grant chunks; positive
     * @param asyncQueueLimitBytes most bytes a {@link FullPolicy#RETRY_ASYNC} channel queues locally
     * @throws IllegalArgumentException if a value is out of its range
     */
    public MessengerConfig(int chunkSize, int c, int cMax, FullPolicy fullPolicy, Duration timeout,
                           long asyncQueueLimitBytes) {
        this(chunkSize, c, cMax, fullPolicy, timeout, asyncQueueLimitBytes, DEFAULT_PUBLICATION_DELAY, true);
    }

    /**
     * Checks the settings.
     *
     * @throws IllegalArgumentException if a value is out of the range given for its component
     */
    public MessengerConfig {
        if (publicationDelay.isNegative() || publicationDelay.compareTo(Duration.ofSeconds(1)) > 0) {
            throw new IllegalArgumentException("publicationDelay must be in [0, 1 s], got " + publicationDelay);
        }
        if (chunkSize < MIN_CHUNK_SIZE || chunkSize % 64 != 0 || chunkSize > MAX_CHUNK_SIZE) {
            throw new IllegalArgumentException("chunkSize must be a multiple of 64 in [" + MIN_CHUNK_SIZE
                    + ", " + MAX_CHUNK_SIZE + "], got " + chunkSize);
        }
        if (c < 1 || cMax < c || cMax > 255 || c > 64) {
            throw new IllegalArgumentException("need 1 <= c <= cMax <= 255 (and c <= 64), got c = " + c
                    + ", cMax = " + cMax);
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive, got " + timeout);
        }
    }

    /**
     * {@return the default settings} 64 KiB chunks, c = 2, c_max = 16, RETRY, 30 s, 16 MiB of asynchronous queue.
     */
    public static MessengerConfig defaults() {
        return new MessengerConfig(64 * 1024, 2, 16, FullPolicy.RETRY, Duration.ofSeconds(30), 16 << 20);
    }

    /**
     * This configuration with other chunk settings.
     *
     * @param chunkSize bytes of each chunk, a multiple of 64 in [{@value #MIN_CHUNK_SIZE}, {@value #MAX_CHUNK_SIZE}]
     * @param newC chunks requested from the receiver at a time, in [1, 64] and at most {@code newCMax}
     * @param newCMax most chunks a messenger holds at the receiver, in [{@code newC}, 255]
     * @return a new configuration
     * @throws IllegalArgumentException if a value is out of its range
     */
    public MessengerConfig withChunks(int chunkSize, int newC, int newCMax) {
        return new MessengerConfig(chunkSize, newC, newCMax, fullPolicy, timeout, asyncQueueLimitBytes,
                publicationDelay, coalescing);
    }

    /**
     * This configuration with another full policy.
     *
     * @param policy what a call does when every chunk up to {@code cMax} is full
     * @return a new configuration
     */
    public MessengerConfig withFullPolicy(FullPolicy policy) {
        return new MessengerConfig(chunkSize, c, cMax, policy, timeout, asyncQueueLimitBytes,
                publicationDelay, coalescing);
    }

    /**
     * This configuration with another timeout.
     *
     * @param newTimeout the longest wait for room or for the receiver to grant chunks; positive
     * @return a new configuration
     * @throws IllegalArgumentException if {@code newTimeout} is not positive
     */
    public MessengerConfig withTimeout(Duration newTimeout) {
        return new MessengerConfig(chunkSize, c, cMax, fullPolicy, newTimeout, asyncQueueLimitBytes,
                publicationDelay, coalescing);
    }

    /**
     * Over a transport without a mapped window (RDMA), how long a call's flag may wait for the next call to carry it:
     * {@code ZERO} publishes every call at once (two WRITEs a call), a positive delay lets a stream of calls go out as
     * one WRITE each. See {@link io.fabricrpc.messaging.Messenger}'s deferred publication.
     *
     * @param delay the longest wait, in [0, 1 s] (default {@link #DEFAULT_PUBLICATION_DELAY}, 500 µs)
     * @return a new configuration
     * @throws IllegalArgumentException if {@code delay} is negative or longer than 1 s
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
     *
     * @param enabled true to hold calls made while the link is backlogged
     * @return a new configuration
     */
    public MessengerConfig withCoalescing(boolean enabled) {
        return new MessengerConfig(chunkSize, c, cMax, fullPolicy, timeout, asyncQueueLimitBytes, publicationDelay,
                enabled);
    }
}
