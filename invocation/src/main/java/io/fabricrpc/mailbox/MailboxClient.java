package io.fabricrpc.mailbox;

import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;
import org.agrona.concurrent.IdleStrategy;

import java.lang.foreign.MemorySegment;

/**
 * The client side of a mailbox channel: threads {@link #open()} a port, exchange packets, {@link Port#close()}.
 * Thread-safe: any number of threads open ports concurrently (each port is held by one thread at a time).
 */
public final class MailboxClient extends Mailbox {

    private volatile ReplyCollector collector;

    MailboxClient(Link link, LocalRegion mailbox, LocalRegion staging, RemoteRegion peerMailbox, MailboxConfig config) {
        super(link, mailbox, staging, peerMailbox, config, false);
    }

    /** Receives the replies of asynchronous calls ({@link Port#closeAwaiting}) on the thread that collects them. */
    public interface ReplyCollector {
        /** The reply is {@code message[0, length)}, valid only during the call; runs with the port locked. */
        void collect(Object token, MemorySegment message, long length);

        /** The reply could not be read (a corrupt packet); the port is usable again. */
        void failed(Object token, RuntimeException failure);
    }

    /** Sets where replies of asynchronous calls go (before the first {@link Port#closeAwaiting}). */
    public void onReply(ReplyCollector replies) {
        this.collector = replies;
    }

    /**
     * Collects the reply of the asynchronous call {@code token} on port {@code index} if it has arrived and no other
     * thread holds the port. Never waits.
     *
     * @return true if the call is no longer outstanding on the port (collected now or earlier)
     */
    public boolean tryCollect(int index, Object token) {
        if (isLocked(index) || !tryLock(index)) {
            return false;
        }
        Port port = ports[index];
        try {
            if (port.pendingReply() != token) {
                return true;
            }
            if (!port.ownsPacket()) {
                return false;
            }
            port.acquiredBy(Thread.currentThread(), Port.Phase.AWAITING);
            port.collectAbandonedReply(collector, config.replyTimeout().toNanos());
            return true;
        } finally {
            if (port.phase() != Port.Phase.CLOSED) {
                port.close();
            } else {
                unlock(index);
            }
        }
    }

    /**
     * Locks a port whose packet the client owns, waiting up to the open timeout while all are busy.
     *
     * @throws AllPortsBusyException if none became free in time (the message says how many ports, how long)
     * @throws io.fabricrpc.api.PeerFailedException if the server is gone
     */
    public Port open() {
        return open(config.openTimeout().toNanos());
    }

    /** {@link #open()} waiting at most {@code timeout} nanoseconds (a call's deadline) while all ports are busy. */
    public Port open(long timeout) {
        return open(System.nanoTime(), timeout);
    }

    /** {@link #open(long)} for a wait that began at {@code start} ({@link System#nanoTime()}). */
    public Port open(long start, long timeout) {
        IdleStrategy idle = null;
        for (boolean first = true; ; first = false) {
            Port port;
            link.checkAlive();
            long left = Math.max(timeout - (System.nanoTime() - start), first ? 1 : 0);
            if (left > 0) {
                try {
                    port = tryOpen(left);
                } catch (MailboxTimeoutException e) {
                    port = null; // the reply left on the port we took did not come in time: all stayed busy
                }
                if (port != null) {
                    return port;
                }
            }
            if (System.nanoTime() - start > timeout) {
                throw new AllPortsBusyException("all " + ports.length + " mailbox ports stayed busy for "
                        + timeout / 1_000_000 + " ms (locked by other threads or awaiting replies of asynchronous"
                        + " calls; raise ports or openTimeout): the call was not sent, it did not run");
            }
            waitHook.run();
            if (idle == null) {
                idle = config.idleStrategy().get();
            }
            idle.idle();
        }
    }

    /**
     * Tries once to lock a port. Prefers ports whose packet the client owns; failing that, takes a port left by
     * an asynchronous call and waits (bounded by the reply timeout) for its reply, which goes to the {@link
     * ReplyCollector} with the call's token (or is dropped if it has none).
     *
     * @return the locked port, or null if every port is locked by another thread
     */
    public Port tryOpen() {
        return tryOpen(config.replyTimeout().toNanos());
    }

    private Port tryOpen(long collectNanos) {
        link.checkAlive(); // a volatile read: a dead server fails new calls at once
        int n = ports.length;
        int start = startIndex(n);
        Thread me = Thread.currentThread();
        int abandoned = -1;
        for (int i = 0; i < n; i++) {
            int index = start + i < n ? start + i : start + i - n;
            if (isLocked(index)) {
                continue;
            }
            Port port = ports[index];
            if (!port.looksOwned(inbox(index))) {
                abandoned = abandoned < 0 ? index : abandoned;
                continue;
            }
            if (tryLock(index)) {
                if (port.ownsPacket()) {
                    port.acquiredBy(me, Port.Phase.OWNED_EMPTY);
                    if (port.pendingReply() != null) {
                        collect(port, collectNanos); // an asynchronous call's reply that arrived: its token's collector gets it
                    }
                    return port;
                }
                unlock(index);
            }
        }
        if (abandoned >= 0 && tryLock(abandoned)) {
            Port port = ports[abandoned];
            port.acquiredBy(me, Port.Phase.AWAITING);
            collect(port, collectNanos);
            return port;
        }
        return null;
    }

    /** Collects the reply left on {@code port} (locked by this thread); on failure releases the port and throws. */
    private void collect(Port port, long timeoutNanos) {
        try {
            port.collectAbandonedReply(collector, timeoutNanos);
        } catch (RuntimeException | Error e) {
            port.close();
            throw e;
        }
    }

    private static int startIndex(int n) {
        // Spread threads over the ports so they rarely contend for the same lock word.
        return (int) ((Thread.currentThread().threadId() * 0x9E3779B97F4A7C15L >>> 40) % n);
    }
}
