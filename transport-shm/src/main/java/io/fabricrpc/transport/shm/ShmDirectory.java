package io.fabricrpc.transport.shm;

import io.fabricrpc.transport.TransportException;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The per-user directory that holds this transport's files: {@code <base>/fabricrpc-<user>}, mode 0700, owned by
 * the user, files 0600. Refuses a directory that another user owns or that others can access, since anyone who
 * can write a mailbox can make this process run code.
 */
final class ShmDirectory {
    private static final Set<PosixFilePermission> DIR_PERMS = PosixFilePermissions.fromString("rwx------");
    private static final FileAttribute<Set<PosixFilePermission>> FILE_PERMS =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));
    private static final long STALE_INCOMPLETE_MILLIS = 60_000;

    private final Path path;

    private ShmDirectory(Path path) {
        this.path = path;
    }

    static ShmDirectory open(Path base) {
        String user = new com.sun.security.auth.module.UnixSystem().getUsername().replaceAll("[^A-Za-z0-9._-]", "_");
        Path dir = base.resolve("fabricrpc-" + user);
        try {
            if (!Files.isDirectory(base)) {
                throw new TransportException("shared-memory base directory " + base + " does not exist (shm.dir)");
            }
            try {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(DIR_PERMS));
            } catch (FileAlreadyExistsException ignored) {
                // checked below
            }
            PosixFileAttributes attrs = Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!attrs.isDirectory()) {
                throw new TransportException(dir + " exists but is not a directory");
            }
            String me = new com.sun.security.auth.module.UnixSystem().getUsername();
            if (!attrs.owner().getName().equals(me)) {
                throw new TransportException("refusing shared-memory directory " + dir + ": owned by "
                        + attrs.owner().getName() + ", not by " + me);
            }
            if (!attrs.permissions().equals(DIR_PERMS)) {
                throw new TransportException("refusing shared-memory directory " + dir + ": permissions "
                        + PosixFilePermissions.toString(attrs.permissions()) + ", expected rwx------ (chmod 700 it)");
            }
        } catch (IOException e) {
            throw new TransportException("cannot prepare shared-memory directory " + dir + ": " + e, e);
        }
        return new ShmDirectory(dir);
    }

    Path path() {
        return path;
    }

    Path endpointFile(long endpointId) {
        return path.resolve("ep-" + Long.toHexString(endpointId) + ".shm");
    }

    Path regionFile(long endpointId, long regionId) {
        return path.resolve("rg-" + Long.toHexString(endpointId) + "-" + regionId + ".shm");
    }

    /** Creates a new 0600 file of {@code bytes} bytes (zeroed) and maps it read-write into {@code arena}. */
    MemorySegment create(Path file, long bytes, Arena arena) {
        try {
            Files.createFile(file, FILE_PERMS);
            try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
                raf.setLength(bytes);
                return plain(raf.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, bytes, arena));
            }
        } catch (IOException e) {
            deleteQuietly(file);
            throw new TransportException("cannot create shared-memory file " + file + " of " + bytes + " bytes: " + e
                    + " (is " + path.getParent() + " full? see shm.dir)", e);
        }
    }

    /** Maps an existing file; {@code writable} false maps it read-only. */
    MemorySegment map(Path file, boolean writable, Arena arena) throws NoSuchFileException {
        try (FileChannel channel = writable
                ? FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)
                : FileChannel.open(file, StandardOpenOption.READ)) {
            return plain(channel.map(writable ? FileChannel.MapMode.READ_WRITE : FileChannel.MapMode.READ_ONLY,
                    0, channel.size(), arena));
        } catch (NoSuchFileException e) {
            throw e;
        } catch (IOException e) {
            throw new TransportException("cannot map shared-memory file " + file + ": " + e, e);
        }
    }

    /**
     * The same memory, scope and access mode as a plain native segment rather than a mapped one. The codec's hot
     * code (capture writers, invokers, record walks) is shared by every call path of a process, and the JIT
     * specializes each segment access to the segment classes it has seen: calls into mapped chunks next to calls
     * into arena-allocated staging and send queues made every access bimorphic, and {@code write} at 256 B ran at
     * about two thirds of its rate whenever {@code send} or {@code trad} ran in the same JVM (measured, Table 2).
     * Nothing here needs the mapped-only operations ({@code force}, {@code load}). {@code reinterpret} is a
     * restricted method: the fabric runs with {@code --enable-native-access} (README).
     */
    static MemorySegment plain(MemorySegment mapped) {
        return mapped.reinterpret(mapped.byteSize());
    }

    static void deleteQuietly(Path file) {
        try {
            Files.deleteIfExists(file);
        } catch (IOException ignored) {
            // best effort: stale-file cleanup retries at the next start
        }
    }

    /**
     * Deletes files whose owner process is gone (crashed without cleaning up), and files that never got a complete
     * header and are older than a minute. Returns how many were deleted.
     */
    int removeStaleFiles() {
        int removed = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(path, "{ep,rg}-*.shm")) {
            for (Path file : files) {
                if (isStale(file)) {
                    deleteQuietly(file);
                    removed++;
                }
            }
        } catch (IOException e) {
            throw new TransportException("cannot scan " + path + " for stale segments: " + e, e);
        }
        return removed;
    }

    private boolean isStale(Path file) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment header;
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
                if (channel.size() < SegmentHeaderDescriptor.HEADER_LENGTH) {
                    return isOld(file);
                }
                header = channel.map(FileChannel.MapMode.READ_ONLY, 0, SegmentHeaderDescriptor.HEADER_LENGTH, arena);
            }
            if (!SegmentHeaderDescriptor.isComplete(header)) {
                return isOld(file);
            }
            return !ProcessLiveness.isSameProcessAlive(SegmentHeaderDescriptor.ownerPid(header),
                    SegmentHeaderDescriptor.ownerStart(header));
        } catch (IOException e) {
            return false;
        }
    }

    private static boolean isOld(Path file) throws IOException {
        return System.currentTimeMillis() - Files.getLastModifiedTime(file).toMillis() > STALE_INCOMPLETE_MILLIS;
    }
}
