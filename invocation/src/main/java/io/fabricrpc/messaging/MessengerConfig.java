package io.fabricrpc.messaging;

import java.time.Duration;

/**
 * Messenger settings (Seriema's defaults: c = 2 chunks per allocation, c_max = 16). Memory per messenger is
 * bounded by {@code cMax × chunkSize} at the receiver plus one chunk of staging at the sender.
 */
public record MessengerConfig(int chunkSize, int c, int cMax, FullPolicy fullPolicy, Duration timeout,
                              long asyncQueueLimitBytes) {
    public MessengerConfig {
        if (chunkSize < ChunkLayout.MIN_CHUNK_SIZE || chunkSize % 64 != 0 || chunkSize > ChunkLayout.MAX_RECORD_LENGTH) {
            throw new IllegalArgumentException("chunkSize must be a multiple of 64 in [" + ChunkLayout.MIN_CHUNK_SIZE
                    + ", " + ChunkLayout.MAX_RECORD_LENGTH + "], got " + chunkSize);
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
        return new MessengerConfig(chunkSize, newC, newCMax, fullPolicy, timeout, asyncQueueLimitBytes);
    }

    public MessengerConfig withFullPolicy(FullPolicy policy) {
        return new MessengerConfig(chunkSize, c, cMax, policy, timeout, asyncQueueLimitBytes);
    }

    public MessengerConfig withTimeout(Duration newTimeout) {
        return new MessengerConfig(chunkSize, c, cMax, fullPolicy, newTimeout, asyncQueueLimitBytes);
    }

    /** The largest payload one call may carry. */
    public long maxPayload() {
        return ChunkLayout.maxPayload(chunkSize);
    }
}
