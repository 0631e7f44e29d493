package io.fabricrpc.transport.shm;

import io.fabricrpc.api.OutOfSpaceException;
import io.fabricrpc.api.TransportException;

import java.io.IOException;
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

    /**
     * {@code <base>/fabricrpc-<user>}; if another user holds that name (squatting it would disable this transport for
     * us), {@code $XDG_RUNTIME_DIR/fabricrpc} when the session has one, which only we can create. Every process of the
     * user makes the same choice, and peers compare the directory (EndpointAddress), so a mismatch is a clear error.
     */
    static ShmDirectory open(Path base) {
        String user = new com.sun.security.auth.module.UnixSystem().getUsername().replaceAll("[^A-Za-z0-9._-]", "_");
        if (!Files.isDirectory(base)) {
            throw new TransportException("shared-memory base directory " + base + " does not exist (shm.dir)");
        }
        Path dir = base.resolve("fabricrpc-" + user);
        String otherOwner = prepare(dir);
        if (otherOwner == null) {
            return new ShmDirectory(dir);
        }
        String runtime = System.getenv("XDG_RUNTIME_DIR");
        if (runtime != null && !runtime.isEmpty() && Files.isDirectory(Path.of(runtime), LinkOption.NOFOLLOW_LINKS)) {
            Path fallback = Path.of(runtime).resolve("fabricrpc");
            if (prepare(fallback) == null) {
                System.getLogger("fabricrpc.shm").log(System.Logger.Level.WARNING, dir + " belongs to " + otherOwner
                        + ", not to you: using " + fallback + " instead (remove the squatted directory, as root)");
                return new ShmDirectory(fallback);
            }
        }
        throw new TransportException("refusing shared-memory directory " + dir + ": owned by " + otherOwner + ", not "
                + "by you (another user created it first); remove it as root, or set shm.dir to a directory only you "
                + "can write (XDG_RUNTIME_DIR is " + (runtime == null ? "not set" : runtime) + ")");
    }

    /** Creates or checks a private directory; null when it is ours and private, else the name of its owner. */
    private static String prepare(Path dir) {
        try {
            try {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(DIR_PERMS));
            } catch (FileAlreadyExistsException ignored) {
                // checked below
            }
            PosixFileAttributes attrs = Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            String me = new com.sun.security.auth.module.UnixSystem().getUsername();
            if (!attrs.owner().getName().equals(me)) {
                return attrs.owner().getName();
            }
            if (!attrs.isDirectory()) {
                throw new TransportException(dir + " exists but is not a directory" + (attrs.isSymbolicLink()
                        ? " (a symbolic link: remove it)" : ""));
            }
            if (!attrs.permissions().equals(DIR_PERMS)) {
                throw new TransportException("refusing shared-memory directory " + dir + ": permissions "
                        + PosixFilePermissions.toString(attrs.permissions()) + ", expected rwx------ (chmod 700 it)");
            }
            return null;
        } catch (IOException e) {
            throw new TransportException("cannot prepare shared-memory directory " + dir + ": " + e, e);
        }
    }

    Path path() {
        return path;
    }

    /** True if {@code file} exists with fewer than {@code bytes}: cut short under a mapping of that length. */
    static boolean isShorterThan(Path file, long bytes) {
        try {
            return java.nio.file.Files.size(file) < bytes;
        } catch (java.io.IOException e) {
            return false; // removed (a close, or a dead owner): liveness tells those apart
        }
    }

    Path endpointFile(long endpointId) {
        return path.resolve("ep-" + Long.toHexString(endpointId) + ".shm");
    }

    Path regionFile(long endpointId, long regionId) {
        return path.resolve("rg-" + Long.toHexString(endpointId) + "-" + regionId + ".shm");
    }

    /**
     * Creates a new 0600 file of {@code bytes} bytes (zeroed), backs every page now (a full {@code shm.dir} is an
     * error here, naming the directory and the bytes, never a fault at first use) and maps it read-write.
     */
    MemorySegment create(Path file, long bytes, Arena arena) {
        try {
            Files.createFile(file, FILE_PERMS); // O_CREAT | O_EXCL: never follows a link planted at the name
        } catch (FileAlreadyExistsException e) {
            throw new TransportException("cannot create shared-memory file " + file + ": it exists already (a stale "
                    + "file of an earlier process with the same id, or another process writing into " + path + ")", e);
        } catch (IOException e) {
            throw new TransportException("cannot create shared-memory file " + file + ": " + e, e);
        }
        try {
            int error = NativeFiles.allocate(file, bytes);
            if (error != 0) {
                throw error == NativeFiles.ENOSPC ? new OutOfSpaceException(noSpace(file, bytes))
                        : new TransportException("cannot back shared-memory file " + file + " with " + bytes
                        + " bytes: errno " + error);
            }
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS)) {
                return plain(channel.map(FileChannel.MapMode.READ_WRITE, 0, bytes, arena));
            }
        } catch (IOException e) {
            deleteQuietly(file);
            throw new TransportException("cannot map shared-memory file " + file + " of " + bytes + " bytes: " + e, e);
        } catch (RuntimeException e) {
            deleteQuietly(file);
            throw e;
        }
    }

    private String noSpace(Path file, long bytes) {
        String free = "";
        try {
            java.nio.file.FileStore store = Files.getFileStore(path);
            free = " (" + store.getUsableSpace() + " of " + store.getTotalSpace() + " bytes free on " + store + ")";
        } catch (IOException ignored) {
            // the message stays useful without the figures
        }
        return "no space for " + bytes + " bytes of " + file + " in " + path + free + ": free space there, enlarge "
                + "the tmpfs (containers: --shm-size) or point shm.dir at a larger one";
    }

    /**
     * Maps an existing regular file of at least {@code minBytes} bytes; {@code writable} false maps it read-only.
     * Links and other file types are refused (a planted FIFO would block, a link would map something else).
     */
    MemorySegment map(Path file, boolean writable, Arena arena, long minBytes) throws NoSuchFileException {
        try {
            PosixFileAttributes attrs = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!attrs.isRegularFile()) {
                throw new TransportException("refusing shared-memory file " + file + ": not a regular file"
                        + (attrs.isSymbolicLink() ? " (a symbolic link)" : ""));
            }
            try (FileChannel channel = writable
                    ? FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)
                    : FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
                long size = channel.size();
                if (size < minBytes) {
                    throw new TransportException("shared-memory file " + file + " has " + size + " bytes, expected at "
                            + "least " + minBytes + " (truncated, or not written by fabricrpc)");
                }
                return plain(channel.map(writable ? FileChannel.MapMode.READ_WRITE : FileChannel.MapMode.READ_ONLY,
                        0, size, arena));
            }
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
            if (!Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
                return false; // never opened: a FIFO would block this start for good; not ours to delete either
            }
            MemorySegment header;
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
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
