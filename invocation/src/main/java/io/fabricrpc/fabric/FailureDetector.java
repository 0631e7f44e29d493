package io.fabricrpc.fabric;

import io.fabricrpc.api.JobConfig;

import static io.fabricrpc.fabric.ControlProtocol.HEARTBEAT;
import static io.fabricrpc.fabric.ControlProtocol.empty;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Rank 0's heartbeat tick once the job has formed: every heartbeat interval it sends each running member a heartbeat
 * and declares failed a member silent for the failure timeout (members stamp {@code ControlConnection.lastSeenNanos} on every
 * message). A tick late by half the failure timeout means this process was not scheduled, so it restarts the
 * members' clocks instead of blaming them. Everything except the constructor runs on the event loop.
 */
final class FailureDetector {

    // Final, set by the constructing thread before the coordinator binds (the bind hands them to the event loop).
    private final Coordinator owner;
    private final ControlPlane cp;
    private final JobConfig cfg;
    private final EventLoop loop;
    private final long failureTimeoutNanos;

    // Event loop only (the tick is a task scheduled on it).
    private ScheduledFuture<?> heartbeatTask;
    private long lastTickNanos;
    private boolean muted;

    FailureDetector(Coordinator owner, ControlPlane cp, JobConfig cfg, EventLoop loop) {
        this.owner = owner;
        this.cp = cp;
        this.cfg = cfg;
        this.loop = loop;
        this.failureTimeoutNanos = cfg.failureTimeout().toNanos();
    }

    /** Starts ticking; {@code now} is when every member's clock was last reset (the job formed). */
    void start(long now) {
        lastTickNanos = now;
        long period = cfg.heartbeatInterval().toNanos();
        heartbeatTask = loop.scheduleAtFixedRate(this::tick, period, period, TimeUnit.NANOSECONDS);
    }

    /** Stops ticking, if started. */
    void stop() {
        if (heartbeatTask != null) {
            heartbeatTask.cancel(false);
        }
    }

    /** Test hook: heartbeats stop going out, but silent members are still detected. */
    void mute() {
        muted = true;
    }

    private void tick() {
        long now = System.nanoTime();
        boolean stalled = now - lastTickNanos > failureTimeoutNanos / 2;
        lastTickNanos = now;
        for (int r = 1; r < cfg.size(); r++) {
            ControlConnection c = owner.running(r);
            if (c == null) {
                continue;
            }
            if (stalled) {
                // This process was not scheduled for a while: peers are not to blame, restart their clocks.
                c.lastSeenNanos = Math.max(c.lastSeenNanos, now);
            } else if (now - c.lastSeenNanos > failureTimeoutNanos) {
                owner.declareFailed(r, "no heartbeat for " + (now - c.lastSeenNanos) / 1_000_000 + " ms (failure timeout "
                    + cfg.failureTimeout().toMillis() + " ms)");
                continue;
            }
            if (!muted) {
                c.ch.writeAndFlush(empty(c.ch.alloc(), HEARTBEAT), c.ch.voidPromise());
                cp.counters.heartbeatsSent++; // event loop
            }
        }
    }
}
