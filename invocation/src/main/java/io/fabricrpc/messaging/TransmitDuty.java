package io.fabricrpc.messaging;

import io.fabricrpc.api.MessengerConfig;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The messaging node's duty on the fabric's {@link SendingAgent}: transmits what senders left pending and did not move
 * for a tick (a deferred flag, held calls: {@link Messenger#transmitIfStale}, by a claim of the transmit position),
 * and drains RETRY_ASYNC queues ({@link AsyncQueueChannel#drainFromAgent}, holding the channel's drain claim).
 *
 * <p>Invariant: a watched messenger's pending work waits at most its publication delay (the tick is half the shortest
 * delay while something waits), and a queue is looked at every {@link #QUEUE_TICK_NANOS} while it holds calls.
 * Agent thread only: {@code lastWaiting}; the sets are concurrent (senders add to them).
 */
final class TransmitDuty implements SendingAgent.Duty {
    /** With nothing pending for this long, the agent stops ticking for flags and parks until a sender wakes it. */
    private static final long QUIET_NANOS = 100_000_000;
    /** The tick while RETRY_ASYNC queues wait for room. */
    private static final long QUEUE_TICK_NANOS = 50_000;

    private final ConcurrentLinkedQueue<AsyncQueueChannel> toFlush = new ConcurrentLinkedQueue<>();
    /** Messengers that have left something pending at least once: the agent bounds how long it waits. */
    private final Set<Messenger> watched = ConcurrentHashMap.newKeySet();
    /** Agent thread only: when something last waited. */
    private long lastWaiting = System.nanoTime();

    void watch(Messenger messenger) {
        watched.add(messenger);
    }

    void unwatch(Messenger messenger) {
        watched.remove(messenger);
    }

    void flushLater(AsyncQueueChannel channel) {
        toFlush.add(channel);
    }

    void unflushLater(AsyncQueueChannel channel) {
        toFlush.remove(channel);
    }

    void clear() {
        watched.clear();
    }

    /** Drains queues, transmits what waited a tick; the next tick: short while queues wait, else per delay, else 0. */
    @Override
    public long doWork(long now) {
        int pending = toFlush.size();
        for (int i = 0; i < pending; i++) {
            AsyncQueueChannel channel = toFlush.poll();
            if (channel == null) {
                break;
            }
            try {
                if (channel.drainFromAgent()) {
                    toFlush.add(channel);
                }
            } catch (RuntimeException e) {
                // Its sender learns it at its next call or flush (the link failed, typically).
                System.getLogger("fabricrpc.messaging").log(System.Logger.Level.ERROR,
                        "cannot drain the queue of " + channel + ": " + e, e);
            }
        }
        long tick = transmitStale();
        if (tick > 0) {
            lastWaiting = now;
        }
        if (!toFlush.isEmpty()) {
            return QUEUE_TICK_NANOS;
        }
        if (tick > 0) {
            return tick;
        }
        return !watched.isEmpty() && now - lastWaiting < QUIET_NANOS ? quietTick() : 0;
    }

    @Override
    public boolean workMayWait() {
        return !toFlush.isEmpty() || transmitStale() > 0; // transmits what was left meanwhile
    }

    /**
     * Transmits what did not move since the previous tick. Returns the tick to keep (half the shortest publication
     * delay among the messengers where something still waits), or 0 if nothing does.
     */
    private long transmitStale() {
        long tick = 0;
        for (Messenger messenger : watched) {
            try {
                if (messenger.transmitIfStale()) {
                    long half = Math.max(1_000, messenger.config.publicationDelay().toNanos() / 2);
                    tick = tick == 0 ? half : Math.min(tick, half);
                }
            } catch (RuntimeException e) {
                watched.remove(messenger); // its link failed: the sender's own calls report that
            }
        }
        return tick;
    }

    /** The tick while nothing waits but senders may leave something any moment. */
    private long quietTick() {
        long tick = MessengerConfig.DEFAULT_PUBLICATION_DELAY.toNanos() / 2;
        for (Messenger messenger : watched) {
            tick = Math.min(tick, Math.max(1_000, messenger.config.publicationDelay().toNanos() / 2));
        }
        return tick;
    }
}
