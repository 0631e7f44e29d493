package io.fabricrpc.mailbox;

import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One side of a mailbox channel between two endpoints: N ports over the transport SPI, written once for every
 * transport. The layout and the ownership invariant are in {@link MailboxLayout}. The lock bitmap is local to
 * the process: a set bit means a thread of this process holds the port.
 */
public abstract sealed class Mailbox implements AutoCloseable permits MailboxClient, MailboxServer {
    private static final VarHandle LOCK_WORDS = MethodHandles.arrayElementVarHandle(long[].class);

    final Link link;
    final LocalRegion mailbox;
    final LocalRegion staging;
    final RemoteRegion peerMailbox;
    final MailboxConfig config;
    final MailboxLayout layout;
    private final long[] lockWords;
    final Port[] ports;
    /** Runs in every round of a wait for the peer or for a port (e.g. the caller's own incoming calls); may throw. */
    volatile Runnable waitHook = () -> { };

    Mailbox(Link link, LocalRegion mailbox, LocalRegion staging, RemoteRegion peerMailbox, MailboxConfig config,
            boolean server) {
        this.link = link;
        this.mailbox = mailbox;
        this.staging = staging;
        this.peerMailbox = peerMailbox;
        this.config = config;
        this.layout = config.layout();
        if (peerMailbox.length() != layout.mailboxRegionLength()) {
            throw new MailboxException("peer mailbox region has " + peerMailbox.length() + " bytes, expected "
                    + layout.mailboxRegionLength() + " for " + layout.ports() + " ports of " + layout.packetSize());
        }
        this.lockWords = new long[layout.ports() / 64];
        this.ports = new Port[layout.ports()];
        for (int i = 0; i < ports.length; i++) {
            ports[i] = new Port(this, i, server);
        }
    }

    /** Lays out a fresh mailbox region (header only; inbox words and packets start zeroed). */
    static void initializeRegion(MemorySegment region, MailboxLayout layout) {
        region.set(ValueLayout.JAVA_INT, MailboxLayout.VERSION_OFFSET, MailboxLayout.VERSION);
        region.set(ValueLayout.JAVA_INT, MailboxLayout.PORTS_OFFSET, layout.ports());
        region.set(ValueLayout.JAVA_INT, MailboxLayout.PACKET_SIZE_OFFSET, layout.packetSize());
        MailboxLayout.INBOX.setRelease(region, (long) MailboxLayout.MAGIC_OFFSET, MailboxLayout.MAGIC); // release: header complete
    }

    public MailboxConfig config() {
        return config;
    }

    public Link link() {
        return link;
    }

    /**
     * Sets what every wait of this side runs once per round (a worker runs its incoming calls there, so two workers
     * calling each other do not deadlock; a liveness check that throws ends the wait).
     */
    public void whileWaiting(Runnable hook) {
        this.waitHook = hook;
    }

    public int portCount() {
        return ports.length;
    }

    /** Test-and-set of port's lock bit; acquire, so the winner sees everything the previous holder wrote. */
    final boolean tryLock(int port) {
        long bit = 1L << (port & 63);
        long before = (long) LOCK_WORDS.getAndBitwiseOrAcquire(lockWords, port >>> 6, bit);
        return (before & bit) == 0;
    }

    /** Clears port's lock bit; release, so the next holder sees this holder's outbox and port state. */
    final void unlock(int port) {
        LOCK_WORDS.getAndBitwiseAndRelease(lockWords, port >>> 6, ~(1L << (port & 63)));
    }

    final boolean isLocked(int port) {
        return ((long) LOCK_WORDS.getOpaque(lockWords, port >>> 6) & (1L << (port & 63))) != 0;
    }

    /** Acquiring load of port's inbox word, written by the peer. */
    final long inbox(int port) {
        return (long) MailboxLayout.INBOX.getAcquire(mailbox.segment(), layout.inboxOffset(port));
    }

    /** Closes this side's regions. Peers blocked on this side see the close through the transport. */
    @Override
    public void close() {
        mailbox.close();
        staging.close();
    }
}
