package io.fabricrpc.mailbox;

import org.agrona.concurrent.IdleStrategy;

/**
 * The wait of one {@link Port} until its side owns the packet, bounded by the peer's liveness and a timeout. Nested
 * waits: a client that waits (for an ack of its request's fragment, or for its reply) pushes the port on its thread's
 * chain of suspended waits, and every wait of that thread above it (any port's, or {@link Port#advanceSuspended()}
 * from a wait loop outside the mailbox) advances the ports below: posts the next request fragment once acked, takes
 * and acks reply fragments into the reassembly buffer. So a thread that serves calls while its own call is
 * outstanding never leaves the peer stalled behind the nested wait (model/mailbox_nested.pml). Only the holder
 * thread advances a port; a stream's last fragment stays in the packet for the suspended receive itself.
 * Invariant: a thread's chain holds only ports that thread holds, newest on top, and a wait pops itself however it
 * ends.
 */
final class PortWait {
    /** Per thread: the top of its chain of client sends and receives suspended in a wait (linked by {@link #below}). */
    private static final ThreadLocal<PortWait[]> SUSPENDED = ThreadLocal.withInitial(() -> new PortWait[1]);

    private final int index;
    private final PortPacket packet;
    private final FragmentStream stream;
    private final Mailbox box;
    private final long replyTimeoutNanos;
    private final IdleStrategy idle;

    // Guarded by the port lock (acquire on lock, release on unlock): only the holder reads or writes these.
    /** The wait this thread suspended before this one's, while this one is on the thread's chain; else null. */
    private PortWait below;
    /** The bound of the current wait: the reply timeout, or less while collecting a reply for an opener. */
    private long waitNanos;

    PortWait(int index, PortPacket packet, FragmentStream stream, Mailbox box) {
        this.index = index;
        this.packet = packet;
        this.stream = stream;
        this.box = box;
        this.replyTimeoutNanos = box.config.replyTimeout().toNanos();
        this.waitNanos = replyTimeoutNanos;
        this.idle = box.config.idleStrategy().get();
    }

    /** Bounds the waits that follow by {@code nanos} instead of the reply timeout, until {@link #unbound()}. */
    void bound(long nanos) {
        waitNanos = nanos;
    }

    /** Bounds the waits that follow by the reply timeout again. */
    void unbound() {
        waitNanos = replyTimeoutNanos;
    }

    /**
     * Waits until this side owns the packet: bounded by the peer's liveness and the reply timeout. Meanwhile advances
     * the thread's suspended receives below; a client receive suspends itself here for the waits nested above it.
     *
     * @param suspend whether this wait goes on the thread's chain (a client's request or reply in flight)
     */
    void awaitOwnership(String what, boolean suspend) {
        if (packet.owned()) {
            return;
        }
        PortWait[] chain = SUSPENDED.get();
        boolean sending = stream.sending();
        if (suspend) {
            below = chain[0];
            chain[0] = this;
        }
        try {
            long start = System.nanoTime();
            idle.reset();
            int polls = 0;
            Runnable hook = box.waitHook;
            while (!packet.owned() && !(sending && !stream.sending())) {
                hook.run();
                for (PortWait wait = suspend ? below : chain[0]; wait != null; wait = wait.below) {
                    wait.stream.advance();
                }
                idle.idle();
                if ((++polls & 15) == 0) {
                    box.link.checkAlive(); // a volatile read; throws PeerFailedException for a dead peer
                    long waited = System.nanoTime() - start;
                    if (waited > waitNanos) {
                        throw new MailboxTimeoutException("port " + index + ": " + what
                                + " did not come from the peer within " + waitNanos / 1_000_000 + " ms (waited "
                                + waited / 1_000_000 + " ms; the peer is alive but did not answer)");
                    }
                }
            }
        } finally {
            if (suspend) {
                chain[0] = below;
                below = null;
            }
        }
    }

    /** Advances the streams of every wait the current thread has suspended, innermost first. Never waits. */
    static void advanceSuspended() {
        for (PortWait wait = SUSPENDED.get()[0]; wait != null; wait = wait.below) {
            wait.stream.advance();
        }
    }
}
