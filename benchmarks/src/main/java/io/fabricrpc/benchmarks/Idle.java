package io.fabricrpc.benchmarks;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

/** The idle strategy every waiting thread of a run uses, the same for the mailbox and the baseline. */
public enum Idle {
    /** The mailbox default ({@code MailboxConfig.defaults()}): 64 spins, 16 yields, then parks of 1 to 100 us. */
    BACKOFF,
    /** Thread.yield between polls. */
    YIELD,
    /** Thread.onSpinWait between polls: lowest latency, but starves other work on a 2-CPU machine. */
    BUSY;

    public IdleStrategy newStrategy() {
        return switch (this) {
            case BACKOFF -> new BackoffIdleStrategy(64, 16, 1_000, 100_000);
            case YIELD -> new YieldingIdleStrategy();
            case BUSY -> new BusySpinIdleStrategy();
        };
    }
}
