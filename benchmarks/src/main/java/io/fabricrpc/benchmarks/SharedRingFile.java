package io.fabricrpc.benchmarks;

import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The baseline's cross-process region: a 0600 file in the same per-user 0700 directory the shared-memory
 * transport uses ({@code <base>/fabricrpc-<user>}), mapped by the client and by the echo process. Named
 * {@code bench-*.ring}, so the transport's stale-file sweep (which owns {@code ep-*} and {@code rg-*}) leaves it
 * alone. Not thread-safe; the creator deletes the file on close.
 */
public final class SharedRingFile implements AutoCloseable {
    private static final Set<PosixFilePermission> DIR_PERMS = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> FILE_PERMS = PosixFilePermissions.fromString("rw-------");

    private final Path path;
    private final Arena arena;
    private final UnsafeBuffer buffer;
    private final boolean owner;

    private SharedRingFile(Path path, Arena arena, MemorySegment mapped, boolean owner) {
        this.path = path;
        this.arena = arena;
        this.buffer = new UnsafeBuffer(mapped.address(), (int) mapped.byteSize());
        this.owner = owner;
    }

    /** Creates a zero-filled file of {@code length} bytes and maps it. */
    public static SharedRingFile create(Path base, int length) {
        Path dir = userDirectory(base);
        Path file = dir.resolve("bench-" + ProcessHandle.current().pid() + "-" + Long.toHexString(System.nanoTime())
                + ".ring");
        Arena arena = Arena.ofShared();
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(FILE_PERMS));
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                channel.write(java.nio.ByteBuffer.allocate(1), length - 1); // zero-filled: two empty rings
                return new SharedRingFile(file, arena, channel.map(FileChannel.MapMode.READ_WRITE, 0, length, arena), true);
            }
        } catch (IOException | RuntimeException e) {
            arena.close();
            deleteQuietly(file);
            throw new IllegalStateException("cannot create the baseline ring file " + file + " of " + length
                    + " bytes: " + e, e);
        }
    }

    /** Maps a file made by {@link #create} in another process; checks its size, owner and mode. */
    public static SharedRingFile open(Path file, int length) {
        Arena arena = Arena.ofShared();
        try {
            PosixFileAttributes attrs = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            String me = System.getProperty("user.name");
            if (!attrs.isRegularFile() || !attrs.permissions().equals(FILE_PERMS) || !attrs.owner().getName().equals(me)
                    || attrs.size() != length) {
                throw new IllegalStateException("refusing baseline ring file " + file + ": " + attrs.size()
                        + " bytes (expected " + length + "), mode " + PosixFilePermissions.toString(attrs.permissions())
                        + " (expected rw-------), owner " + attrs.owner().getName() + " (expected " + me + ")");
            }
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                return new SharedRingFile(file, arena, channel.map(FileChannel.MapMode.READ_WRITE, 0, length, arena), false);
            }
        } catch (IOException | RuntimeException e) {
            arena.close();
            throw new IllegalStateException("cannot map the baseline ring file " + file + ": " + e, e);
        }
    }

    /** {@code <base>/fabricrpc-<user>}: created 0700 if absent; refused if another user owns it or others can enter. */
    static Path userDirectory(Path base) {
        String me = System.getProperty("user.name");
        Path dir = base.resolve("fabricrpc-" + me.replaceAll("[^A-Za-z0-9._-]", "_"));
        try {
            try {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(DIR_PERMS));
            } catch (FileAlreadyExistsException ignored) {
                // checked below
            }
            PosixFileAttributes attrs = Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!attrs.isDirectory() || !attrs.owner().getName().equals(me) || !attrs.permissions().equals(DIR_PERMS)) {
                throw new IllegalStateException("refusing directory " + dir + ": owner " + attrs.owner().getName()
                        + ", mode " + PosixFilePermissions.toString(attrs.permissions()) + " (expected a directory of "
                        + me + " with rwx------)");
            }
            return dir;
        } catch (IOException e) {
            throw new IllegalStateException("cannot prepare directory " + dir + ": " + e, e);
        }
    }

    public Path path() {
        return path;
    }

    public UnsafeBuffer buffer() {
        return buffer;
    }

    @Override
    public void close() {
        arena.close();
        if (owner) {
            deleteQuietly(path);
        }
    }

    private static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException ignored) {
            // a leftover bench-*.ring file is harmless and named after the pid that made it
        }
    }
}
