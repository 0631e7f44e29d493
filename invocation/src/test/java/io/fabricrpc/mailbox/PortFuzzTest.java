package io.fabricrpc.mailbox;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.fabricrpc.fuzz.ClassVersionShim;
import io.fabricrpc.fuzz.FuzzSupport;
import io.fabricrpc.transport.ArenaRegion;
import io.fabricrpc.transport.NullLink;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;
import org.agrona.concurrent.NoOpIdleStrategy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Fuzzes a server {@link Port}'s reading of the packets a client wrote one-sided into its mailbox: packet headers
 * (payload length, flags, message length) and the reassembly of streamed fragments. The input is a sequence of
 * packets of {@value #PACKET_SIZE} bytes (header and payload), handed over one at a time: the first before
 * {@code recv}, each next one when the port waits for the peer (after acknowledging a fragment). Documented outcomes:
 * the reader gets a message of at most the configured maximum, within the bytes it may read, or a
 * {@link CorruptPacketException}; when the input runs out mid-stream the harness ends the wait.
 */
@ExtendWith(ClassVersionShim.class)
class PortFuzzTest {
    private static final List<Class<? extends Throwable>> DOCUMENTED = List.of(CorruptPacketException.class);
    static final int PACKET_SIZE = 64;
    private static final long MAX_MESSAGE = 4096;
    private static final MailboxConfig CONFIG = new MailboxConfig(MailboxLayout.MIN_PORTS, PACKET_SIZE,
            Duration.ofSeconds(1), Duration.ofSeconds(1), MAX_MESSAGE, NoOpIdleStrategy::new);
    private static final MailboxLayout LAYOUT = CONFIG.layout();
    private static final ArenaRegion MAILBOX = new ArenaRegion(1, LAYOUT.mailboxRegionLength(), RemoteAccess.WRITE);
    private static final ArenaRegion STAGING = new ArenaRegion(2, LAYOUT.stagingRegionLength(), RemoteAccess.NONE);
    private static final RemoteRegion PEER = new RemoteRegion(9, 3, 0, LAYOUT.mailboxRegionLength(), 0,
            RemoteAccess.WRITE);

    /** Ends a wait for a packet the input does not hold. */
    private static final class InputExhausted extends RuntimeException {
        InputExhausted() {
            super(null, null, false, false);
        }
    }

    @FuzzTest(maxDuration = FuzzSupport.MAX_DURATION)
    @Timeout(FuzzSupport.TIMEOUT_SECONDS)
    void packets(byte[] input) {
        MAILBOX.segment().fill((byte) 0);
        Mailbox box = new MailboxServer(new NullLink(9), MAILBOX, STAGING, PEER, CONFIG);
        Port port = box.ports[0];
        int[] next = {0};
        box.whileWaiting(() -> {
            if (next[0] >= input.length) {
                throw new InputExhausted();
            }
            deliver(box, port, input, next);
        });
        if (!box.tryLock(0)) {
            throw new AssertionError("fresh port locked");
        }
        port.acquiredBy(Thread.currentThread(), Port.Phase.PENDING);
        deliver(box, port, input, next);
        try {
            port.recv((message, length) -> {
                if (length < 0 || length > MAX_MESSAGE || length > message.byteSize()) {
                    throw new AssertionError("message of " + length + " bytes in a segment of " + message.byteSize()
                            + ", limit " + MAX_MESSAGE);
                }
            });
        } catch (InputExhausted e) {
            return;
        } catch (Throwable e) {
            FuzzSupport.expectDocumented(e, DOCUMENTED, input.length);
        }
    }

    /** The client's one-sided write: the next packet's bytes, then the flipped inbox word that hands it over. */
    private static void deliver(Mailbox box, Port port, byte[] input, int[] next) {
        MemorySegment packet = box.mailbox.segment().asSlice(LAYOUT.packetOffset(0), PACKET_SIZE);
        packet.fill((byte) 0);
        int n = Math.min(PACKET_SIZE, input.length - next[0]);
        MemorySegment.copy(MemorySegment.ofArray(input), next[0], packet, 0, Math.max(0, n));
        next[0] += PACKET_SIZE;
        MailboxLayout.INBOX.setRelease(box.mailbox.segment(), LAYOUT.inboxOffset(0), port.outbox() ^ 1);
    }

    /** A one-packet message and a message streamed in three fragments, with the headers Port.post writes. */
    @Test
    @EnabledIfSystemProperty(named = FuzzSupport.WRITE_SEEDS, matches = ".+")
    void writeSeeds() {
        Path dir = FuzzSupport.seedDirectory().resolve("io/fabricrpc/mailbox/PortFuzzTestInputs/packets");
        int capacity = LAYOUT.payloadCapacity();
        FuzzSupport.writeSeed(dir, "single", packets(new int[] {10}, 10));
        FuzzSupport.writeSeed(dir, "streamed", packets(new int[] {capacity, capacity, 5}, 2 * capacity + 5));
    }

    private static byte[] packets(int[] lengths, long messageLength) {
        MemorySegment out = MemorySegment.ofArray(new byte[lengths.length * PACKET_SIZE]);
        for (int i = 0; i < lengths.length; i++) {
            MemorySegment packet = out.asSlice((long) i * PACKET_SIZE, PACKET_SIZE);
            packet.set(ValueLayout.JAVA_INT_UNALIGNED, MailboxLayout.PACKET_LENGTH_OFFSET, lengths[i]);
            packet.set(ValueLayout.JAVA_INT_UNALIGNED, MailboxLayout.PACKET_FLAGS_OFFSET,
                    i + 1 < lengths.length ? MailboxLayout.FLAG_MORE : 0);
            packet.set(ValueLayout.JAVA_LONG_UNALIGNED, MailboxLayout.PACKET_MESSAGE_LENGTH_OFFSET, messageLength);
            for (int j = 0; j < lengths[i]; j++) {
                packet.set(ValueLayout.JAVA_BYTE, MailboxLayout.PACKET_HEADER_LENGTH + j, (byte) (i * 16 + j));
            }
        }
        return out.toArray(ValueLayout.JAVA_BYTE);
    }
}
