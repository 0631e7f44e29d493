package io.fabricrpc.transport.shm;

import io.fabricrpc.fabric.LocalLauncher;
import io.fabricrpc.invocation.FaultInjectionCrossProcessTest;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The fault-injection suite over shared memory, plus faults of the files themselves: truncated, or no room left. */
class ShmFaultInjectionCrossProcessTest extends FaultInjectionCrossProcessTest {
    /** The chunk size of the truncate scenario: its chunk files are the only ones of this length. */
    private static final long CHUNK_FILE_BYTES = SegmentHeaderDescriptor.HEADER_LENGTH + 12288;

    private boolean mounted;

    @Override
    protected TransportFixture fixture() {
        return ShmFixture.INSTANCE;
    }

    private static int run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        return p.waitFor(30, TimeUnit.SECONDS) ? p.exitValue() : -1;
    }

    @Override
    protected void unmount(Path directory) {
        if (mounted) {
            try {
                run("umount", "-l", directory.toString());
            } catch (Exception e) {
                throw new AssertionError("umount " + directory, e);
            }
        }
    }

    /** Files of rank {@code rank}'s endpoint (its id is its pid above 20 bits, the first endpoint of its JVM). */
    private List<Path> filesOf(LocalLauncher job, int rank, String kind) throws IOException {
        String owner = kind + "-" + Long.toHexString((job.process(rank).pid() << 20) | 1);
        try (Stream<Path> files = Files.list(base.resolve("fabricrpc-" + System.getProperty("user.name")))) {
            return files.filter(f -> f.getFileName().toString().startsWith(owner)).sorted().toList();
        }
    }

    private static String latestStatus(LocalLauncher job, int rank) {
        List<String> lines = job.process(rank).output();
        for (int i = lines.size() - 1; i >= 0; i--) {
            if (lines.get(i).startsWith("STATUS")) {
                return lines.get(i);
            }
        }
        throw new AssertionError("rank " + rank + " printed no STATUS: " + lines);
    }

    private static String part(String status, String key) {
        int at = status.indexOf(key + "=");
        assertTrue(at >= 0, key + " in " + status);
        int end = status.indexOf(key.equals("error") ? " | " : " ", at);
        return status.substring(at + key.length() + 1, end < 0 ? status.length() : end);
    }

    private LocalLauncher truncateWhileCalling(String kind, java.util.function.Predicate<Path> which) throws Exception {
        LocalLauncher job = launch(2, 1, 3000, Map.of("shm.dir", privateBase().toString()), "truncate");
        job.process(0).awaitLine(l -> l.equals("READY"), START);
        job.process(0).awaitLine(l -> l.startsWith("STATUS") && Long.parseLong(field(l, "ran")) > 10_000, STEP);
        List<Path> targets = filesOf(job, 0, kind).stream().filter(which).toList();
        assertFalse(targets.isEmpty(), "no " + kind + " file of rank 0 in " + base);
        Instant truncatedAt = Instant.now();
        for (Path target : targets) {
            assertEquals(0, run("truncate", "-s", "0", target.toString()), "truncate " + target);
        }
        Thread.sleep(3000);
        System.out.println(kind + " files " + targets.stream().map(Path::getFileName).toList() + " of rank 0 truncated "
                + Duration.between(truncatedAt, Instant.now()).toMillis() + " ms ago:\n  rank 0 "
                + latestStatus(job, 0) + "\n  rank 1 " + latestStatus(job, 1) + "\n  rank 1's sender ended "
                + job.process(1).output().stream().filter(l -> l.startsWith("SENDER_ENDED")).findFirst()
                        .map(l -> (Long.parseLong(field(l, "at")) - micros(truncatedAt)) / 1000 + " ms after it")
                        .orElse("not"));
        return job;
    }

    @Test
    void aTruncatedChunkFileIsReportedAndKillsNoThread() throws Exception {
        try (LocalLauncher job = truncateWhileCalling("rg", f -> sizeOf(f) == CHUNK_FILE_BYTES)) {
            String receiver = latestStatus(job, 0);
            String sender = latestStatus(job, 1);
            assertTrue(job.process(0).isAlive() && job.process(1).isAlive(), job.report());
            assertEquals("[fabricrpc-handler-0.0]", part(receiver, "handlers"), "the receiver's worker lives on");
            assertTrue(part(receiver, "error").contains("fault"), "the fault reaches the error listener: " + receiver);
            assertTrue(sender.startsWith("STATUS"), "the sender's process lives on: " + sender);
        }
    }

    @Test
    void aTruncatedChunkFileFailsItsInboxNotTheReceiver() throws Exception {
        try (LocalLauncher job = truncateWhileCalling("rg", f -> sizeOf(f) == CHUNK_FILE_BYTES)) {
            String receiver = latestStatus(job, 0);
            assertEquals("returned:3", part(receiver, "self"), "the receiver still serves its other calls: " + receiver);
            assertTrue(part(receiver, "error").contains("1/0"), "reported as the sender's failure: " + receiver);
            assertTrue(job.process(1).isAlive(), "the sender's process lives on: " + job.report());
        }
    }

    @Test
    void aTruncatedChunkFileFailsTheSendersLink() throws Exception {
        try (LocalLauncher job = truncateWhileCalling("rg", f -> sizeOf(f) == CHUNK_FILE_BYTES)) {
            // Whichever side touches the cut page first tells the sender: its own store fails the link, or the
            // receiver's read poisons the channel. Never the raw InternalError (ShmSenderMemoryFaultTest: the store).
            String status = latestStatus(job, 1);
            String sender = status.substring(status.indexOf("sender=") + "sender=".length(), status.indexOf(" peer="));
            assertTrue(sender.startsWith("PeerFailedException") && sender.contains("cut short")
                    || sender.startsWith("ChannelPoisonedException") && sender.contains("MEMORY_FAULT"), sender);
        }
    }

    @Test
    void aTruncatedEndpointFileFailsItsLinksNotThePeer() throws Exception {
        try (LocalLauncher job = truncateWhileCalling("ep", f -> true)) {
            String owner = latestStatus(job, 0);
            String peer = latestStatus(job, 1);
            assertTrue(job.process(0).isAlive() && job.process(1).isAlive(), job.report());
            // The owner: its own file is gone, so every link of it fails (a send to itself included), once reported.
            assertTrue(part(owner, "self").startsWith("PeerFailedException") && owner.contains("cut short"), owner);
            List<String> output = job.process(0).output();
            assertTrue(output.stream().anyMatch(l -> l.contains("own file") && l.contains("cut short")), "reported");
            long severe = output.stream().filter(l -> l.startsWith("SEVERE")).count();
            assertTrue(severe < 20, severe + " SEVERE lines: the fault is reported, not logged at every poll");
            // The peer: its link to the owner fails, its process lives on.
            assertTrue(part(peer, "sender").startsWith("PeerFailedException") && peer.contains("cut short"), peer);
        }
    }

    @Test
    void aProcessWhoseOwnEndpointFileIsGoneFailsForTheWholeJob() throws Exception {
        try (LocalLauncher job = truncateWhileCalling("ep", f -> true)) {
            assertEquals("failed", part(latestStatus(job, 1), "peer"), "the job's verdict on rank 0");
            assertTrue(part(latestStatus(job, 0), "error").contains("cut short"), "its error listener hears why");
        }
    }

    private static long sizeOf(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            return -1;
        }
    }

    /** The fill scenario on a small tmpfs: rank 1 fills it, then calls a worker it never called, then frees it. */
    private String[] fillAndCall() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "mounting a small tmpfs needs root");
        Path small = privateBase();
        assumeTrue(run("mount", "-t", "tmpfs", "-o", "size=8m,mode=0755", "tmpfs", small.toString()) == 0,
                "tmpfs mount allowed here");
        mounted = true;
        try (LocalLauncher job = launch(2, 2, 3000, Map.of("shm.dir", small.toString()), "fill")) {
            assertEquals("FIRST returned:1", await(job, 1, "FIRST", START));
            String filled = await(job, 1, "FILLED", STEP);
            String full = await(job, 1, "FULL", STEP);
            String recovered = await(job, 1, "RECOVERED", STEP);
            System.out.println("full shm.dir: " + filled + "\n  " + full + "\n  " + recovered);
            return new String[] {filled, full, recovered};
        }
    }

    @Test
    void aFullShmDirFailsTheCallsThatNeedMemoryAtOnceAndRecovers() throws Exception {
        String[] seen = fillAndCall();
        assertTrue(seen[0].contains("no space") && seen[0].contains("shm.dir"), seen[0]);
        String full = seen[1];
        assertTrue(Long.parseLong(field(full, "ms")) < 10_000, full);
        // The one-way call needs the receiver's chunks; the callReturn needs a mailbox channel here.
        assertTrue(full.contains("call=MessagingException") || full.contains("call=TransportException"), full);
        assertTrue(full.contains("callReturn=OutOfSpaceException") && full.contains("no space"), full); // a TransportException
        assertEquals("RECOVERED returned:4 | old=returned:5", seen[2]);
    }

    @Test
    void aFullShmDirIsNamedToTheSenderWhoseChunksItRefused() throws Exception {
        String full = fillAndCall()[1];
        String call = full.substring(full.indexOf("call="), full.indexOf(" | callReturn="));
        assertTrue(call.contains("no space") && call.contains("shm.dir"), call);
    }
}
