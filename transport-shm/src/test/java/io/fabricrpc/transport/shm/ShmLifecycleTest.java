package io.fabricrpc.transport.shm;

import io.fabricrpc.transport.EndpointAddress;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.TransportException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Shared-memory specifics: private files, stale segments of dead owners, dead versus slow peers. */
class ShmLifecycleTest {
    @TempDir
    Path base;

    private ShmTransport open(long peerTimeoutMillis) {
        return new ShmTransport(base, 65536, 20, peerTimeoutMillis);
    }

    private Path dir() {
        return base.resolve("fabricrpc-" + System.getProperty("user.name"));
    }

    private static List<Path> files(Path dir) throws IOException {
        try (Stream<Path> list = Files.list(dir)) {
            return list.toList();
        }
    }

    @Test
    void filesArePrivateToTheUserAndRemovedOnClose() throws Exception {
        try (ShmTransport transport = open(10_000)) {
            LocalRegion shared = transport.allocate(100, RemoteAccess.WRITE);
            LocalRegion privateRegion = transport.allocate(100, RemoteAccess.NONE);
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir())));
            List<Path> files = files(dir());
            assertEquals(2, files.size(), "the endpoint file and the shared region only: " + files);
            for (Path file : files) {
                assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)), file.toString());
            }
            shared.close();
            privateRegion.close();
            assertEquals(1, files(dir()).size());
        }
        assertEquals(List.of(), files(dir()));
    }

    /**
     * Mapped files are handed out as plain native segments (LocalRegion's class doc; the contract test checks the
     * class for every transport), over the same memory, and they still die with their transport.
     */
    @Test
    void segmentsArePlainNativeAndCloseWithTheirTransport() {
        java.lang.foreign.MemorySegment region;
        java.lang.foreign.MemorySegment window;
        try (ShmTransport owner = open(10_000); ShmTransport peer = open(10_000)) {
            LocalRegion shared = owner.allocate(4096, RemoteAccess.WRITE);
            LocalRegion staging = owner.allocate(4096, RemoteAccess.NONE);
            region = shared.segment();
            window = peer.connect(owner.address()).directWindow(shared.remote());
            assertTrue(LocalRegion.isPlainNative(region), "a shared region: " + region.getClass());
            assertTrue(LocalRegion.isPlainNative(staging.segment()), "a private region: " + staging.segment().getClass());
            assertTrue(LocalRegion.isPlainNative(window), "a peer's window: " + window.getClass());
            window.set(java.lang.foreign.ValueLayout.JAVA_LONG, 64, 42L);
            assertEquals(42L, region.get(java.lang.foreign.ValueLayout.JAVA_LONG, 64), "the same memory");
        }
        assertFalse(region.scope().isAlive(), "unmapped with the transport");
        assertThrows(IllegalStateException.class, () -> region.get(java.lang.foreign.ValueLayout.JAVA_LONG, 0));
        assertThrows(IllegalStateException.class, () -> window.get(java.lang.foreign.ValueLayout.JAVA_LONG, 0));
    }

    @Test
    void aDirectoryOthersCanEnterIsRefused() throws Exception {
        Files.createDirectory(dir(), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        TransportException e = assertThrows(TransportException.class, () -> open(10_000));
        assertTrue(e.getMessage().contains("rwxr-xr-x") && e.getMessage().contains("chmod 700"), e.getMessage());
    }

    @Test
    void aMissingBaseDirectoryIsNamed() {
        TransportException e = assertThrows(TransportException.class,
                () -> new ShmTransport(base.resolve("nope"), 65536, 20, 10_000));
        assertTrue(e.getMessage().contains("nope"), e.getMessage());
    }

    private Process child() throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(io.fabricrpc.fabric.LocalLauncher.inheritedJvmFlags());
        command.addAll(List.of("-Xmx64m", "-cp", System.getProperty("java.class.path"),
                ShmEndpointProcess.class.getName(), base.toString()));
        return new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    }

    private static EndpointAddress readAddress(Process process) throws IOException {
        BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream()));
        String line = reader.readLine();
        assertTrue(line != null && line.startsWith("ADDRESS "), "child said: " + line);
        reader.readLine();
        return new EndpointAddress("shm", HexFormat.of().parseHex(line.substring(8)));
    }

    @Test
    void segmentsOfAKilledOwnerAreCleanedUpAtTheNextStart() throws Exception {
        Process owner = child();
        try {
            readAddress(owner);
            assertEquals(2, files(dir()).size());
        } finally {
            owner.destroyForcibly();
            owner.waitFor(10, TimeUnit.SECONDS);
        }
        assertEquals(2, files(dir()).size(), "a killed process cannot clean up after itself");
        try (ShmTransport transport = open(10_000)) {
            assertEquals(List.of(transport.directory().endpointFile(transport.endpointId())), files(dir()),
                    "stale files of the dead owner are gone; only the new endpoint remains");
        }
    }

    @Test
    void aStoppedPeerIsSlowNotDeadUntilItsHeartbeatIsOverdue() throws Exception {
        Process peer = child();
        try (ShmTransport patient = open(10_000); ShmTransport impatient = open(300)) {
            EndpointAddress address = readAddress(peer);
            Link patientLink = patient.connect(address);
            Link impatientLink = impatient.connect(address);
            new ProcessBuilder("kill", "-STOP", Long.toString(peer.pid())).start().waitFor();
            long stoppedAt = System.nanoTime();
            while (impatientLink.isAlive()) {
                Thread.sleep(5);
                assertTrue(System.nanoTime() - stoppedAt < 5_000_000_000L, "a silent heartbeat went unnoticed");
            }
            PeerFailedException e = assertThrows(PeerFailedException.class, impatientLink::checkAlive);
            assertTrue(e.getMessage().contains("no heartbeat"), e.getMessage());
            assertTrue(patientLink.isAlive(), "a stopped process is slow, not dead, within the 10 s timeout");
            new ProcessBuilder("kill", "-CONT", Long.toString(peer.pid())).start().waitFor();
            peer.destroyForcibly();
            peer.waitFor(10, TimeUnit.SECONDS);
            long killedAt = System.nanoTime();
            while (patientLink.isAlive()) {
                Thread.sleep(1);
                assertTrue(System.nanoTime() - killedAt < 1_000_000_000L, "a dead peer went unnoticed for 1 s");
            }
            assertTrue(assertThrows(PeerFailedException.class, patientLink::checkAlive).getMessage().contains("exited"));
        } finally {
            peer.destroyForcibly();
        }
    }

    @Test
    void aRecycledPidIsNotMistakenForTheOwner() {
        long me = ProcessLiveness.currentPid();
        long start = ProcessLiveness.startTime(me);
        assertTrue(start > 0);
        assertTrue(ProcessLiveness.isSameProcessAlive(me, start));
        assertFalse(ProcessLiveness.isSameProcessAlive(me, start + 1), "same pid, other start time");
        assertFalse(ProcessLiveness.isSameProcessAlive(Integer.MAX_VALUE - 7, 0), "no such pid");
    }
}
