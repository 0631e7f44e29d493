package io.fabricrpc.transport.shm;

import io.fabricrpc.api.MessengerConfig;
import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.messaging.Messenger;
import io.fabricrpc.messaging.MessagingNode;
import io.fabricrpc.messaging.RecordWriter;
import io.fabricrpc.transport.Transport;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A sender whose store lands in a chunk file the receiver's side cut short (HotSpot turns the SIGBUS into
 * {@link InternalError}): the send fails the link and throws {@link PeerFailedException} naming the file, never the raw
 * error. The receiver does not poll here, so its own fault report cannot overtake the sender's.
 */
class ShmSenderMemoryFaultTest {
    private static final long RECEIVER = 0x1_0000_0003L;
    private static final RecordWriter EIGHT_BYTES = (target, offset, limit) -> {
        if (limit < 8) {
            return -1;
        }
        target.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, offset, 42L);
        return 8;
    };

    @Test
    void aStoreIntoATruncatedChunkFailsTheLinkWithAClearException() throws IOException {
        Transport sender = ShmFixture.INSTANCE.open();
        Transport receiver = ShmFixture.INSTANCE.open();
        MessagingNode senders = new MessagingNode(sender);
        MessagingNode receivers = new MessagingNode(receiver);
        try {
            receivers.registerReceiver(RECEIVER);
            Messenger messenger = senders.messenger(0x2_0000_0001L, RECEIVER, receiver.address(),
                    MessengerConfig.defaults());
            // Compiled first, as in a running job, so that the fault may surface away from the store (below).
            var receiving = receivers.registerReceiver(RECEIVER + 1);
            long[] received = {0};
            Messenger warm = senders.messenger(0x2_0000_0002L, RECEIVER + 1, receiver.address(),
                    MessengerConfig.defaults());
            for (int i = 0; i < 200_000; i++) {
                assertTrue(warm.send(1, EIGHT_BYTES));
                if ((i & 255) == 255) {
                    long deadline = System.nanoTime() + 10_000_000_000L;
                    while (received[0] <= i && System.nanoTime() < deadline) {
                        receiving.processCalls((from, tag, record, offset, length) -> received[0]++);
                    }
                    assertTrue(received[0] > i, "warm-up calls received: " + received[0] + " of " + (i + 1));
                }
            }
            List<Path> warmChunks = receiverChunkFiles((ShmTransport) receiver);
            assertTrue(messenger.send(1, EIGHT_BYTES)); // maps the receiver's first chunk into the sender
            List<Path> chunks = receiverChunkFiles((ShmTransport) receiver).stream()
                    .filter(f -> !warmChunks.contains(f)).toList();
            assertFalse(chunks.isEmpty(), "the receiver's chunk files");
            for (Path chunk : chunks) {
                try (FileChannel file = FileChannel.open(chunk, StandardOpenOption.WRITE)) {
                    file.truncate(0);
                }
            }
            PeerFailedException failed = awaitLinkFailure(messenger);
            assertTrue(failed.getMessage().contains("cut short"), failed.getMessage());
            PeerFailedException again = assertThrows(PeerFailedException.class, () -> messenger.send(1, EIGHT_BYTES));
            assertTrue(again.getMessage().contains("cut short"), "the link stays failed: " + again.getMessage());
        } finally {
            senders.close();
            receivers.close();
            sender.close();
            receiver.close();
        }
    }

    /**
     * Sends until the link fails. HotSpot raises a fault in compiled code at a later safepoint poll, which may lie
     * outside the messenger's handler (here, in this loop): then the raw error escapes, and the transport's periodic
     * file check fails the link within its period. Interpreted, or with the poll inside, the first store fails it.
     */
    private static PeerFailedException awaitLinkFailure(Messenger messenger) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        int escaped = 0;
        while (System.nanoTime() < deadline) {
            try {
                messenger.send(1, EIGHT_BYTES);
            } catch (PeerFailedException e) {
                System.out.println("link failed after " + escaped + " raw faults: " + e.getMessage());
                return e;
            } catch (InternalError asynchronous) {
                escaped++;
                java.util.concurrent.locks.LockSupport.parkNanos(10_000_000);
            }
        }
        throw new AssertionError("the link did not fail within 10 s (" + escaped + " raw faults)");
    }

    private static List<Path> receiverChunkFiles(ShmTransport receiver) throws IOException {
        String prefix = "rg-" + Long.toHexString(receiver.endpointId());
        try (Stream<Path> files = Files.list(receiver.directory().path())) {
            return files.filter(f -> f.getFileName().toString().startsWith(prefix)).toList();
        }
    }
}
