package io.fabricrpc.transport.shm;

import io.fabricrpc.transport.Link;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A link that hands out windows runs its failure hooks whenever it stops being alive ({@link Link#whenFailed}): a
 * sender storing into a window looks at the link only when told to, so every way a link ends must tell it.
 */
class ShmLinkFailureHooksTest {
    @TempDir
    Path base;

    private ShmTransport open() {
        return new ShmTransport(base, 65536, 20, 10_000);
    }

    @Test
    void aFenceRunsTheHooksAndAHookAddedLaterRunsAtOnce() {
        try (ShmTransport a = open(); ShmTransport b = open()) {
            Link link = a.connect(b.address());
            AtomicInteger first = new AtomicInteger();
            AtomicInteger second = new AtomicInteger();
            link.whenFailed(first::incrementAndGet);
            link.whenFailed(second::incrementAndGet);
            assertEquals(0, first.get() + second.get(), "not while the link lives");
            link.fence("declared failed by the test");
            link.fence("again");
            assertEquals(1, first.get(), "the fence ran the hook, the second fence did not again");
            assertEquals(1, second.get());
            AtomicInteger late = new AtomicInteger();
            link.whenFailed(late::incrementAndGet);
            assertEquals(1, late.get(), "added after the failure: run at once");
        }
    }

    @Test
    void closingTheEndpointRunsTheHooksOfEveryLink() {
        AtomicInteger ran = new AtomicInteger();
        try (ShmTransport b = open(); ShmTransport c = open()) {
            ShmTransport a = open();
            a.connect(b.address()).whenFailed(ran::incrementAndGet);
            a.connect(c.address()).whenFailed(ran::incrementAndGet);
            a.close();
            assertTrue(ran.get() >= 2, "both links' hooks ran: " + ran.get());
        }
    }

    @Test
    void aPeerThatClosesItsEndpointRunsTheHooks() {
        try (ShmTransport a = open()) {
            ShmTransport b = open();
            Link link = a.connect(b.address());
            AtomicInteger ran = new AtomicInteger();
            link.whenFailed(ran::incrementAndGet);
            b.close();
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (ran.get() == 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait(); // the liveness thread checks peers every 20 ms
            }
            assertEquals(1, ran.get(), "the liveness thread saw the peer close");
            assertFalse(link.isAlive());
        }
    }

    @Test
    void aFaultOfTheEndpointsOwnFileRunsTheHooksOfEveryLink() throws IOException {
        try (ShmTransport a = open(); ShmTransport b = open()) {
            Link link = a.connect(b.address());
            AtomicInteger ran = new AtomicInteger();
            link.whenFailed(ran::incrementAndGet);
            Path own = a.directory().endpointFile(a.endpointId());
            try (FileChannel file = FileChannel.open(own, StandardOpenOption.WRITE)) {
                file.truncate(SegmentHeaderDescriptor.HEADER_LENGTH); // the ring goes; nothing here touches it
            }
            assertTrue(a.faulted(null), "the short file is found");
            assertTrue(ran.get() >= 1, "the hook ran");
            assertFalse(link.isAlive());
        }
    }
}
