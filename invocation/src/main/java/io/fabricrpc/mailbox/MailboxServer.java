package io.fabricrpc.mailbox;

import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;

/**
 * The server side of a mailbox channel: threads {@link #tryOpen()} a port that holds a client's message, then
 * {@code recv}, reply and close. Thread-safe: any number of server threads may scan concurrently.
 */
public final class MailboxServer extends Mailbox {
    private volatile int cursor;

    MailboxServer(Link link, LocalRegion mailbox, LocalRegion staging, RemoteRegion peerMailbox, MailboxConfig config) {
        super(link, mailbox, staging, peerMailbox, config, true);
    }

    /**
     * Scans once for a port with pending work (inbox != outbox) that no other server thread holds, and locks it.
     *
     * @return the port, holding the client's unread message, or null if there is no pending work
     */
    public Port tryOpen() {
        int n = ports.length;
        int start = cursor;
        Thread me = Thread.currentThread();
        for (int i = 0; i < n; i++) {
            int index = start + i < n ? start + i : start + i - n;
            Port port = ports[index];
            if (isLocked(index) || !port.looksOwned(inbox(index))) {
                continue;
            }
            if (tryLock(index)) {
                if (port.ownsPacket()) {
                    port.acquiredBy(me, Port.Phase.PENDING);
                    cursor = index + 1 < n ? index + 1 : 0; // round-robin: later scans start past this port
                    return port;
                }
                unlock(index);
            }
        }
        return null;
    }

    /**
     * Ports whose request waits for a server thread: a racy count for diagnostics (reads the inbox words only, locks
     * nothing), never for the protocol.
     */
    public int pendingRequests() {
        int pending = 0;
        for (int index = 0; index < ports.length; index++) {
            if (ports[index].looksOwned(inbox(index))) {
                pending++;
            }
        }
        return pending;
    }

    /**
     * Serves at most one pending request with {@code handler} (receive, reply in place, close).
     *
     * @return true if a request was served
     */
    public boolean serveOne(Port.RequestHandler handler) {
        Port port = tryOpen();
        if (port == null) {
            return false;
        }
        try {
            port.recvAndSend(handler);
        } finally {
            port.close();
        }
        return true;
    }
}
