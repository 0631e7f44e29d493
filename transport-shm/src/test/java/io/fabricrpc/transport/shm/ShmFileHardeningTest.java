package io.fabricrpc.transport.shm;

import io.fabricrpc.api.TransportException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Hostile or broken files in the shm directory: clear errors at the boundary, never a hang or a fault later. */
class ShmFileHardeningTest {
    @TempDir
    Path base;

    private Path dir() {
        return base.resolve("fabricrpc-" + System.getProperty("user.name"));
    }

    private static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    private static int run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        return p.waitFor(30, TimeUnit.SECONDS) ? p.exitValue() : -1;
    }

    @Test
    void aFifoPlantedInTheDirectoryDoesNotBlockTheStart() throws Exception {
        Files.createDirectory(dir(), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        assumeTrue(run("mkfifo", dir().resolve("ep-1.shm").toString()) == 0, "mkfifo available");
        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
            try (ShmTransport transport = new ShmTransport(base, 65536, 20, 10_000)) {
                assertTrue(Files.exists(dir().resolve("ep-1.shm")), "not ours to delete: left alone");
                assertTrue(transport.address() != null);
            }
        });
    }

    @Test
    void linksAndShortFilesAreRefusedWhenMapped() throws Exception {
        try (ShmTransport transport = new ShmTransport(base, 65536, 20, 10_000); Arena arena = Arena.ofConfined()) {
            ShmDirectory directory = transport.directory();
            Path target = dir().resolve("target.shm");
            Files.write(target, new byte[8192]);
            Path link = dir().resolve("rg-1-1.shm");
            Files.createSymbolicLink(link, target);
            TransportException e = assertThrows(TransportException.class,
                    () -> directory.map(link, true, arena, 100));
            assertTrue(e.getMessage().contains("not a regular file") && e.getMessage().contains("symbolic link"),
                    e.getMessage());

            Path shortFile = dir().resolve("rg-1-2.shm");
            try (RandomAccessFile raf = new RandomAccessFile(shortFile.toFile(), "rw")) {
                raf.setLength(1000);
            }
            e = assertThrows(TransportException.class, () -> directory.map(shortFile, true, arena, 4096));
            assertTrue(e.getMessage().contains("1000 bytes") && e.getMessage().contains("4096")
                    && e.getMessage().contains("truncated"), e.getMessage());
        }
    }

    @Test
    void aNameTakenAlreadyIsNotReportedAsAFullDisk() throws Exception {
        try (ShmTransport transport = new ShmTransport(base, 65536, 20, 10_000); Arena arena = Arena.ofConfined()) {
            Path taken = dir().resolve("rg-2-1.shm");
            Files.write(taken, new byte[10]);
            TransportException e = assertThrows(TransportException.class,
                    () -> transport.directory().create(taken, 4096, arena));
            assertTrue(e.getMessage().contains("exists already") && !e.getMessage().contains("full"), e.getMessage());
        }
    }

    @Test
    void aFullShmDirIsAClearErrorAtAllocationNotAFaultAtFirstUse() throws Exception {
        assumeTrue(isRoot(), "mounting a small tmpfs needs root");
        Path small = Files.createDirectory(base.resolve("small"));
        assumeTrue(run("mount", "-t", "tmpfs", "-o", "size=512k,mode=0755", "tmpfs", small.toString()) == 0,
                "tmpfs mount allowed here");
        try {
            try (ShmTransport transport = new ShmTransport(small, 65536, 20, 10_000)) {
                TransportException e = assertThrows(TransportException.class,
                        () -> transport.allocate(4 << 20, io.fabricrpc.api.RemoteAccess.WRITE));
                assertTrue(e.getMessage().contains("no space for") && e.getMessage().contains("shm.dir"),
                        e.getMessage());
                try (var files = Files.list(small.resolve("fabricrpc-root"))) {
                    assertEquals(0, files.filter(f -> f.getFileName().toString().startsWith("rg-")).count(),
                            "the refused file is removed");
                }
                transport.allocate(64 << 10, io.fabricrpc.api.RemoteAccess.WRITE).close(); // room for this
            }
        } finally {
            run("umount", small.toString());
        }
    }

    @Test
    void aDirectorySquattedByAnotherUserIsRefusedOrAvoided() throws Exception {
        assumeTrue(isRoot(), "handing a directory to another user needs root");
        Files.createDirectory(dir(), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        UserPrincipal nobody = base.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
        Files.setOwner(dir(), nobody);
        String runtime = System.getenv("XDG_RUNTIME_DIR");
        if (runtime == null || runtime.isEmpty() || !Files.isDirectory(Path.of(runtime))) {
            TransportException e = assertThrows(TransportException.class, () -> new ShmTransport(base, 65536, 20, 10_000));
            assertTrue(e.getMessage().contains("owned by nobody") && e.getMessage().contains("shm.dir"), e.getMessage());
        } else {
            try (ShmTransport transport = new ShmTransport(base, 65536, 20, 10_000)) {
                assertEquals(Path.of(runtime).resolve("fabricrpc"), transport.directory().path());
            }
        }
    }
}
