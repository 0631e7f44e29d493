package io.fabricrpc.transport;

import io.fabricrpc.api.TransportException;

import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.api.RemoteAccess;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The transport SPI's contract; every transport module runs it with its own fixture. */
public abstract class TransportContractTest {
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle BYTE = ValueLayout.JAVA_BYTE.varHandle();

    protected abstract TransportFixture fixture();

    private Transport a;
    private Transport b;

    @BeforeEach
    void openEndpoints() {
        a = fixture().open();
        b = fixture().open();
    }

    @AfterEach
    void closeEndpoints() {
        b.close();
        a.close();
    }

    /** LocalRegion's class doc: one segment class for every segment a transport hands out. */
    @Test
    void regionsAndWindowsArePlainNativeSegments() {
        try (LocalRegion shared = b.allocate(4096, RemoteAccess.WRITE);
             LocalRegion local = a.allocate(4096, RemoteAccess.NONE)) {
            assertTrue(LocalRegion.isPlainNative(shared.segment()), shared.segment().getClass().getName());
            assertTrue(LocalRegion.isPlainNative(local.segment()), local.segment().getClass().getName());
            MemorySegment window = a.connect(b.address()).directWindow(shared.remote());
            assertTrue(window == null || LocalRegion.isPlainNative(window), () -> window.getClass().getName());
        }
    }

    /** {@link Link#whenFailed}: a link that hands out windows tells their senders when it ends, even told late. */
    @Test
    void aLinkThatHandsOutWindowsRunsItsFailureHooks() {
        try (LocalRegion shared = b.allocate(4096, RemoteAccess.WRITE)) {
            Link link = a.connect(b.address());
            org.junit.jupiter.api.Assumptions.assumeTrue(link.directWindow(shared.remote()) != null,
                    "no windows: every send looks at the link");
            java.util.concurrent.atomic.AtomicInteger ran = new java.util.concurrent.atomic.AtomicInteger();
            link.whenFailed(ran::incrementAndGet);
            assertEquals(0, ran.get(), "not while the link lives");
            link.fence("declared failed by the test");
            assertTrue(ran.get() >= 1, "the fence ran it");
            java.util.concurrent.atomic.AtomicInteger late = new java.util.concurrent.atomic.AtomicInteger();
            link.whenFailed(late::incrementAndGet);
            assertTrue(late.get() >= 1, "added after the fence: run at once");
        }
    }

    @Test
    void writeThenFlagIsSeenInIssueOrder() throws Exception {
        try (LocalRegion target = b.allocate(4096, RemoteAccess.WRITE);
             LocalRegion source = a.allocate(4096, RemoteAccess.NONE)) {
            Link link = a.connect(b.address());
            int rounds = 20_000;
            AtomicReference<String> error = new AtomicReference<>();
            Thread reader = Thread.ofPlatform().start(() -> {
                for (long round = 1; round <= rounds; round++) {
                    while ((long) LONG.getAcquire(target.segment(), 0L) < round) {
                        Thread.onSpinWait();
                    }
                    for (int i = 0; i < 16; i++) {
                        long seen = target.segment().get(ValueLayout.JAVA_LONG, 64 + 8L * i);
                        if (seen < round) {
                            error.compareAndSet(null, "round " + round + ": word " + i + " was " + seen);
                        }
                    }
                }
            });
            for (long round = 1; round <= rounds; round++) {
                for (int i = 0; i < 16; i++) {
                    source.segment().set(ValueLayout.JAVA_LONG, 8L * i, round);
                }
                link.awaitCompletion(link.write(source, 0, target.remote(), 64, 128));
                link.writeLong(target.remote(), 0, round);
            }
            reader.join(30_000);
            assertFalse(reader.isAlive(), "reader did not see every round");
            assertEquals(null, error.get());
        }
    }

    @Test
    void writeAndFlagNeverShowsTheFlagBeforeTheBytes() throws Exception {
        try (LocalRegion target = b.allocate(4096, RemoteAccess.WRITE);
             LocalRegion source = a.allocate(4096, RemoteAccess.NONE)) {
            Link link = a.connect(b.address());
            int rounds = 20_000;
            AtomicReference<String> error = new AtomicReference<>();
            Thread reader = Thread.ofPlatform().start(() -> {
                for (long round = 1; round <= rounds; round++) {
                    while ((long) LONG.getAcquire(target.segment(), 8L) < round) {
                        Thread.onSpinWait();
                    }
                    long seen = target.segment().get(ValueLayout.JAVA_LONG, 64 + 8L * (round % 16));
                    if (seen < round) {
                        error.compareAndSet(null, "round " + round + ": bytes were " + seen);
                    }
                }
            });
            for (long round = 1; round <= rounds; round++) {
                for (int i = 0; i < 16; i++) {
                    source.segment().set(ValueLayout.JAVA_LONG, 8L * i, round);
                }
                link.awaitCompletion(link.writeAndFlag(source, 0, target.remote(), 64, 128, 8, round));
            }
            reader.join(30_000);
            assertFalse(reader.isAlive(), "reader did not see every round");
            assertEquals(null, error.get());
        }
    }

    @Test
    void writePublishedNeverShowsTheFirstByteBeforeTheRest() throws Exception {
        int slots = 8;
        int record = 4 + 4 + 16 * 8;
        try (LocalRegion target = b.allocate(4096, RemoteAccess.WRITE);
             LocalRegion source = a.allocate(4096, RemoteAccess.NONE)) {
            Link link = a.connect(b.address());
            int rounds = 20_000;
            AtomicReference<String> error = new AtomicReference<>();
            java.util.concurrent.atomic.AtomicLong consumed = new java.util.concurrent.atomic.AtomicLong();
            Thread reader = Thread.ofPlatform().start(() -> {
                for (int round = 1; round <= rounds; round++) {
                    long at = 256L * (round % slots);
                    while ((byte) BYTE.getAcquire(target.segment(), at) == 0) { // the first byte lands last
                        Thread.onSpinWait();
                    }
                    int header = target.segment().get(ValueLayout.JAVA_INT, at);
                    long last = target.segment().get(ValueLayout.JAVA_LONG, at + record - 8);
                    if (header != (round << 8 | 0x80) || last != round) {
                        error.compareAndSet(null, "round " + round + ": header " + header + ", last bytes " + last);
                    }
                    target.segment().asSlice(at, record).fill((byte) 0); // the slot is free again
                    consumed.set(round);
                }
            });
            for (int round = 1; round <= rounds; round++) {
                long deadline = System.nanoTime() + 30_000_000_000L;
                while (round - consumed.get() > slots - 1 && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                }
                source.segment().set(ValueLayout.JAVA_INT, 0, round << 8 | 0x80); // bytes 1..3 may land before byte 0
                for (int i = 0; i < 16; i++) {
                    source.segment().set(ValueLayout.JAVA_LONG, 8 + 8L * i, round);
                }
                link.awaitCompletion(link.writePublished(source, 0, target.remote(), 256L * (round % slots), record));
            }
            reader.join(30_000);
            assertFalse(reader.isAlive(), "reader did not see every round");
            assertEquals(null, error.get());
            TransportException unaligned = assertThrows(TransportException.class,
                    () -> link.writePublished(source, 0, target.remote(), 2, 8));
            assertTrue(unaligned.getMessage().contains("offset 2"), unaligned.getMessage());
        }
    }

    @Test
    void writeFirstByteAsReplacesTheFirstByteAndWritesTheRest() {
        try (LocalRegion target = b.allocate(4096, RemoteAccess.WRITE);
             LocalRegion source = a.allocate(4096, RemoteAccess.NONE)) {
            Link link = a.connect(b.address());
            for (int i = 0; i < 4096; i++) {
                source.segment().set(ValueLayout.JAVA_BYTE, i, (byte) (i % 251 + 1));
            }
            link.awaitCompletion(link.writeFirstByteAs(source, 100, target.remote(), 200, 300, (byte) 0x5A));
            link.awaitCompletion(link.writeFirstByteAs(source, 1000, target.remote(), 1000, 2, (byte) 0));
            for (int at = 0; at < 4096; at++) {
                byte expected = at == 200 ? 0x5A
                        : at > 200 && at < 500 ? source.segment().get(ValueLayout.JAVA_BYTE, at - 100)
                        : at == 1001 ? source.segment().get(ValueLayout.JAVA_BYTE, 1001) : 0;
                assertEquals(expected, target.segment().get(ValueLayout.JAVA_BYTE, at), "byte " + at);
            }
            assertEquals((byte) 201, source.segment().get(ValueLayout.JAVA_BYTE, 200), "the source is left alone");
            TransportException unaligned = assertThrows(TransportException.class,
                    () -> link.writeFirstByteAs(source, 0, target.remote(), 66, 16, (byte) 1));
            assertTrue(unaligned.getMessage().contains("offset 66"), unaligned.getMessage());
            assertThrows(TransportException.class, () -> link.writeFirstByteAs(source, 0, target.remote(), 64, 1, (byte) 1));
        }
    }

    /**
     * The messenger's deferred publication: record k goes out with its first byte replaced by a marker, and a reader
     * takes the arrival of record k + 1's marker (a later write of the link) as proof that record k landed whole; the
     * last record is proven by a 1-byte write after it. Round after round over the same (zeroed) memory.
     */
    @Test
    void aLaterWritesFirstByteProvesTheEarlierWriteLanded() throws Exception {
        int records = 48;
        int size = 64;
        int rounds = 400;
        byte marker = 0x20;
        try (LocalRegion target = b.allocate(4096, RemoteAccess.WRITE);
             LocalRegion source = a.allocate(4096, RemoteAccess.NONE)) {
            Link link = a.connect(b.address());
            AtomicReference<String> error = new AtomicReference<>();
            java.util.concurrent.atomic.AtomicInteger consumedRounds = new java.util.concurrent.atomic.AtomicInteger();
            Thread reader = Thread.ofPlatform().start(() -> {
                for (int round = 1; round <= rounds; round++) {
                    for (int k = 0; k < records; k++) {
                        long at = (long) size * k;
                        long deadline = System.nanoTime() + 30_000_000_000L;
                        while ((byte) BYTE.getAcquire(target.segment(), at + size) == 0 && System.nanoTime() < deadline) {
                            Thread.onSpinWait(); // the next record's marker, or the closing byte after the last
                        }
                        for (int i = 1; i < size; i++) {
                            byte seen = target.segment().get(ValueLayout.JAVA_BYTE, at + i);
                            if (seen != (byte) (round + k + i | 1)) {
                                error.compareAndSet(null, "round " + round + " record " + k + " byte " + i + ": " + seen);
                            }
                        }
                    }
                    target.segment().asSlice(0, (long) size * records + 4).fill((byte) 0);
                    consumedRounds.set(round);
                }
            });
            long end = (long) size * records;
            source.segment().set(ValueLayout.JAVA_BYTE, end, (byte) 1);
            for (int round = 1; round <= rounds; round++) {
                long deadline = System.nanoTime() + 30_000_000_000L;
                while (consumedRounds.get() < round - 1 && System.nanoTime() < deadline) {
                    Thread.onSpinWait(); // the previous round's writes all completed: the source may be refilled
                }
                for (int k = 0; k < records; k++) {
                    for (int i = 0; i < size; i++) {
                        source.segment().set(ValueLayout.JAVA_BYTE, (long) size * k + i, (byte) (round + k + i | 1));
                    }
                    long at = (long) size * k;
                    link.writeFirstByteAs(source, at, target.remote(), at, size, marker);
                }
                link.awaitCompletion(link.write(source, end, target.remote(), end, 1)); // proves the last record
            }
            reader.join(60_000);
            assertFalse(reader.isAlive(), "reader did not see every record");
            assertEquals(null, error.get());
        }
    }

    @Test
    void writePublishedInlineTakesTheSourceBytesDuringTheCall() {
        try (LocalRegion target = b.allocate(4096, RemoteAccess.WRITE)) {
            Link link = a.connect(b.address());
            MemorySegment heap = MemorySegment.ofArray(new byte[Link.MAX_INLINE_LENGTH]);
            for (int round = 1; round <= 200; round++) {
                for (int i = 0; i < Link.MAX_INLINE_LENGTH; i++) {
                    heap.set(ValueLayout.JAVA_BYTE, i, (byte) (round + i));
                }
                long ticket = link.writePublishedInline(heap, 0, target.remote(), 64L * (round % 32),
                        Link.MAX_INLINE_LENGTH);
                heap.fill((byte) 0); // the call took the bytes: this must not reach the peer
                link.awaitCompletion(ticket);
                MemorySegment landed = target.segment().asSlice(64L * (round % 32), Link.MAX_INLINE_LENGTH);
                for (int i = 0; i < Link.MAX_INLINE_LENGTH; i++) {
                    assertEquals((byte) (round + i), landed.get(ValueLayout.JAVA_BYTE, i), "round " + round + " byte " + i);
                }
            }
            TransportException tooLong = assertThrows(TransportException.class,
                    () -> link.writePublishedInline(heap, 0, target.remote(), 0, Link.MAX_INLINE_LENGTH + 1));
            assertTrue(tooLong.getMessage().contains(String.valueOf(Link.MAX_INLINE_LENGTH + 1)), tooLong.getMessage());
        }
    }

    /**
     * A counter pushed as fast as the link goes while the peer reads it: every value read is one that was published
     * (all are multiples of a constant with every byte non-zero, which a mix of two would almost never be), none
     * exceeds the latest publication, and reads never go back.
     */
    @Test
    void counterSlotReadsAreNeverTornAheadOrBackwards() throws Exception {
        long step = 0x0000_0101_0101_0101L;
        int publications = 50_000;
        try (LocalRegion target = b.allocate(4096, RemoteAccess.WRITE)) {
            Link link = a.connect(b.address());
            CounterSlot.Writer writer = new CounterSlot.Writer(link, target.remote(), 64);
            java.util.concurrent.atomic.AtomicLong started = new java.util.concurrent.atomic.AtomicLong();
            AtomicReference<String> error = new AtomicReference<>();
            java.util.concurrent.atomic.AtomicLong reads = new java.util.concurrent.atomic.AtomicLong();
            Thread reader = Thread.ofPlatform().start(() -> {
                long known = 0;
                while (known < publications * step && error.get() == null) {
                    long value = CounterSlot.read(target.segment(), 64, known);
                    long bound = started.get() * step; // read after the slot: no publication beyond it had begun
                    if (value % step != 0 || value > bound || value < known) {
                        error.compareAndSet(null, "read 0x" + Long.toHexString(value) + " after 0x"
                                + Long.toHexString(known) + " with 0x" + Long.toHexString(bound) + " published");
                    }
                    known = value;
                    reads.incrementAndGet();
                }
            });
            long ticket = 0;
            for (long k = 1; k <= publications && error.get() == null; k++) {
                started.set(k);
                ticket = writer.publish(k * step);
                if ((k & 63) == 0) {
                    link.awaitCompletion(ticket); // keep within the send queue without waiting for every write
                }
            }
            link.awaitCompletion(ticket);
            reader.join(60_000);
            assertFalse(reader.isAlive(), "reader never saw the last publication");
            assertEquals(null, error.get());
            assertTrue(reads.get() > 0);
        }
    }

    @Test
    void readReturnsTheRemoteBytes() {
        try (LocalRegion exposed = b.allocate(256, RemoteAccess.READ);
             LocalRegion local = a.allocate(256, RemoteAccess.NONE)) {
            for (int i = 0; i < 256; i++) {
                exposed.segment().set(ValueLayout.JAVA_BYTE, i, (byte) i);
            }
            Link link = a.connect(b.address());
            link.awaitCompletion(link.read(exposed.remote(), 16, local, 0, 100));
            byte[] expected = new byte[100];
            for (int i = 0; i < 100; i++) {
                expected[i] = (byte) (i + 16);
            }
            assertArrayEquals(expected, local.segment().asSlice(0, 100).toArray(ValueLayout.JAVA_BYTE));
        }
    }

    @Test
    void accessFlagsAreEnforced() {
        try (LocalRegion writeOnly = b.allocate(64, RemoteAccess.WRITE);
             LocalRegion readOnly = b.allocate(64, RemoteAccess.READ);
             LocalRegion privateRegion = b.allocate(64, RemoteAccess.NONE);
             LocalRegion local = a.allocate(64, RemoteAccess.NONE)) {
            Link link = a.connect(b.address());
            TransportException denied = assertThrows(TransportException.class,
                    () -> link.read(writeOnly.remote(), 0, local, 0, 8));
            assertTrue(denied.getMessage().contains("WRITE"), denied.getMessage());
            assertThrows(TransportException.class, () -> link.write(local, 0, readOnly.remote(), 0, 8));
            assertThrows(TransportException.class, () -> link.writeLong(privateRegion.remote(), 0, 1));
        }
    }

    @Test
    void outOfRangeAccessNamesTheValues() {
        try (LocalRegion target = b.allocate(64, RemoteAccess.WRITE);
             LocalRegion local = a.allocate(64, RemoteAccess.NONE)) {
            Link link = a.connect(b.address());
            TransportException e = assertThrows(TransportException.class,
                    () -> link.write(local, 0, target.remote(), 60, 8));
            assertTrue(e.getMessage().contains("60") && e.getMessage().contains("64"), e.getMessage());
            assertThrows(TransportException.class, () -> link.writeLong(target.remote(), 4, 1));
        }
    }

    @Test
    void regionHandlesRoundTripThroughTheirEncoding() {
        try (LocalRegion region = b.allocate(1000, RemoteAccess.READ_WRITE); Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(RemoteRegion.ENCODED_LENGTH);
            region.remote().encode(buffer, 0);
            RemoteRegion decoded = RemoteRegion.decode(buffer, 0);
            assertEquals(region.remote(), decoded);
            assertEquals(1000, decoded.length());
            // A decoded handle (as a peer receives it) addresses the same memory.
            try (LocalRegion local = a.allocate(8, RemoteAccess.NONE)) {
                local.segment().set(ValueLayout.JAVA_LONG, 0, 42);
                Link link = a.connect(b.address());
                link.awaitCompletion(link.write(local, 0, decoded, 992, 8));
                assertEquals(42, region.segment().get(ValueLayout.JAVA_LONG, 992));
            }
        }
    }

    @Test
    void messagesArriveInOrderWithTheirSender() {
        Link link = a.connect(b.address());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment payload = arena.allocate(64);
            for (int i = 0; i < 10; i++) {
                payload.set(ValueLayout.JAVA_INT, 0, i);
                assertTrue(link.send(7, payload, 0, 4 + i));
            }
        }
        List<String> received = new ArrayList<>();
        int delivered = pollUntil(b, 10, (from, type, message) -> {
            assertEquals(a.endpointId(), from.peerId());
            received.add(type + ":" + message.get(ValueLayout.JAVA_INT_UNALIGNED, 0) + ":" + message.byteSize());
        });
        assertEquals(10, delivered);
        for (int i = 0; i < 10; i++) {
            assertEquals("7:" + i + ":" + (4 + i), received.get(i));
        }
        // The receiver can answer on the link it was handed.
        List<Integer> answers = new ArrayList<>();
        try (Arena arena = Arena.ofConfined()) {
            b.connect(a.address()).send(9, arena.allocate(8), 0, 8);
        }
        pollUntil(a, 1, (from, type, message) -> answers.add(type));
        assertEquals(List.of(9), answers);
    }

    /**
     * Polls {@code endpoint} until {@code expected} messages have arrived or 10 s have passed; returns how many did.
     * An accepted send is not yet a delivered one (an RDMA SEND lands later), so one poll may see fewer.
     */
    private static int pollUntil(Transport endpoint, int expected, MessageHandler handler) {
        int received = 0;
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (received < expected && System.nanoTime() < deadline) {
            received += endpoint.pollMessages(handler, Integer.MAX_VALUE);
        }
        return received;
    }

    @Test
    void aFullMessageQueueSaysSoInsteadOfDropping() {
        Link link = a.connect(b.address());
        int size = a.maxMessageSize();
        int sent = 0;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment payload = arena.allocate(size);
            while (link.send(3, payload, 0, size)) {
                sent++;
                assertTrue(sent < 1_000_000, "queue never filled");
            }
            assertEquals(sent, pollUntil(b, sent, (from, type, message) -> { }));
            assertTrue(link.send(3, payload, 0, size), "queue has room again after draining");
            IllegalArgumentException tooBig = assertThrows(IllegalArgumentException.class,
                    () -> link.send(3, arena.allocate(size + 1), 0, size + 1));
            assertTrue(tooBig.getMessage().contains(Integer.toString(size + 1)), tooBig.getMessage());
        }
    }

    @Test
    void loopbackLinkReachesOwnRegions() {
        try (LocalRegion region = a.allocate(64, RemoteAccess.WRITE)) {
            Link self = a.connect(a.address());
            self.writeLong(region.remote(), 8, 77);
            assertEquals(77L, (long) LONG.getAcquire(region.segment(), 8L));
        }
    }

    @Test
    void aClosedPeerFailsTheLinkAndItsWaits() throws Exception {
        Transport c = fixture().open();
        Link link = a.connect(c.address());
        assertTrue(link.isAlive());
        long closedAt = System.nanoTime();
        c.close();
        while (link.isAlive()) {
            Thread.sleep(1);
            assertTrue(System.nanoTime() - closedAt < 5_000_000_000L, "close not detected within 5 s");
        }
        PeerFailedException e = assertThrows(PeerFailedException.class, link::checkAlive);
        assertNotNull(e.peer());
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
    }

    @Test
    void connectingToAnAbsentPeerFailsClearly() {
        Transport c = fixture().open();
        EndpointAddress gone = c.address();
        c.close();
        assertThrows(PeerFailedException.class, () -> a.connect(gone));
    }
}
