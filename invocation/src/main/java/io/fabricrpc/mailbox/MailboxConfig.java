package io.fabricrpc.mailbox;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.time.Duration;
import java.util.function.Supplier;

/**
 * Settings of a mailbox channel. Both ends must agree on {@code ports} and {@code packetSize} (the handshake
 * checks). {@code openTimeout} bounds {@link MailboxClient#open()}; {@code replyTimeout} bounds every wait for the
 * peer (a dead peer is detected sooner, by the transport's liveness checks); {@code maxMessageBytes} bounds a
 * streamed message; {@code idleStrategy} makes one strategy per port for its waits.
 */
public record MailboxConfig(int ports, int packetSize, Duration openTimeout, Duration replyTimeout,
                            long maxMessageBytes, Supplier<IdleStrategy> idleStrategy) {
    public MailboxConfig {
        new MailboxLayout(ports, packetSize); // validates both
        if (openTimeout.isNegative() || replyTimeout.isNegative() || replyTimeout.isZero()) {
            throw new IllegalArgumentException("mailbox timeouts must be positive: open " + openTimeout + ", reply "
                    + replyTimeout);
        }
        if (maxMessageBytes < packetSize) {
            throw new IllegalArgumentException("maxMessageBytes " + maxMessageBytes + " < packetSize " + packetSize);
        }
    }

    /** 64 ports of 256 bytes, 1 s to open, 30 s for a reply, 16 MiB messages, spin-yield-park idling. */
    public static MailboxConfig defaults() {
        return new MailboxConfig(64, 256, Duration.ofSeconds(1), Duration.ofSeconds(30), 16 << 20,
                () -> new BackoffIdleStrategy(64, 16, 1_000, 100_000));
    }

    public MailboxConfig withPorts(int newPorts) {
        return new MailboxConfig(newPorts, packetSize, openTimeout, replyTimeout, maxMessageBytes, idleStrategy);
    }

    public MailboxConfig withPacketSize(int newPacketSize) {
        return new MailboxConfig(ports, newPacketSize, openTimeout, replyTimeout, maxMessageBytes, idleStrategy);
    }

    public MailboxConfig withOpenTimeout(Duration timeout) {
        return new MailboxConfig(ports, packetSize, timeout, replyTimeout, maxMessageBytes, idleStrategy);
    }

    public MailboxConfig withReplyTimeout(Duration timeout) {
        return new MailboxConfig(ports, packetSize, openTimeout, timeout, maxMessageBytes, idleStrategy);
    }

    public MailboxConfig withIdleStrategy(Supplier<IdleStrategy> strategy) {
        return new MailboxConfig(ports, packetSize, openTimeout, replyTimeout, maxMessageBytes, strategy);
    }

    MailboxLayout layout() {
        return new MailboxLayout(ports, packetSize);
    }
}
