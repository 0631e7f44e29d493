package io.fabricrpc.counters;

import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One process's counters file, mapped: header ({@link CountersFileDescriptor}) and an Agrona {@link CountersManager}
 * over the metadata and values buffers. Created 0600 in a 0700 directory the user owns; deleted by {@link #close}.
 *
 * <p>Invariant: after {@link #create}, only the publisher's thread touches {@link #manager()} (allocation, values): every
 * word of the file has one writer. Files of processes that are gone are removed when a new one is created.
 */
public final class CountersFile implements AutoCloseable {
    private static final Set<PosixFilePermission> DIR_PERMS = PosixFilePermissions.fromString("rwx------");
    private static final AtomicInteger SEQUENCE = new AtomicInteger(); // several fabrics of one JVM: one file each

    private final Path path;
    private final Arena arena;
    private final CountersManager manager;
    private final UnsafeBuffer values;
    private boolean closed;

    private CountersFile(Path path, Arena arena, CountersManager manager, UnsafeBuffer values) {
        this.path = path;
        this.arena = arena;
        this.manager = manager;
        this.values = values;
    }

    /** Creates and maps the file of this process's rank {@code rank} of job {@code jobId}. */
    public static CountersFile create(CountersConfig config, int rank, String jobId) throws IOException {
        Path dir = prepareDirectory(config.directory());
        removeFilesOfGoneProcesses(dir);
        long pid = ProcessHandle.current().pid();
        Path path = dir.resolve(pid + "-" + SEQUENCE.incrementAndGet() + "-r" + rank + CountersFileDescriptor.FILE_SUFFIX);
        int valuesLength = CountersFileDescriptor.valuesLength(config.maxCounters());
        int metadataLength = CountersFileDescriptor.metadataLength(valuesLength);
        long length = CountersFileDescriptor.fileLength(valuesLength);
        Arena arena = Arena.ofShared();
        try (FileChannel channel = FileChannel.open(path, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
            channel.truncate(length); // sparse on tmpfs: pages come as counters are used
            MemorySegment mapped = channel.map(FileChannel.MapMode.READ_WRITE, 0, length, arena);
            UnsafeBuffer header = new UnsafeBuffer(mapped.address(), CountersFileDescriptor.HEADER_LENGTH);
            UnsafeBuffer metadata = new UnsafeBuffer(mapped.address() + CountersFileDescriptor.metadataOffset(), metadataLength);
            UnsafeBuffer values = new UnsafeBuffer(
                    mapped.address() + CountersFileDescriptor.valuesOffset(metadataLength), valuesLength);
            CountersManager manager = new CountersManager(metadata, values, StandardCharsets.US_ASCII);
            CountersFileDescriptor.soHeader(header, rank, pid, processStartMillis(ProcessHandle.current()), jobId,
                    metadataLength, valuesLength);
            return new CountersFile(path, arena, manager, values);
        } catch (IOException | RuntimeException e) {
            arena.close();
            Files.deleteIfExists(path);
            throw e;
        }
    }

    public Path path() {
        return path;
    }

    /** Publisher thread only. */
    CountersManager manager() {
        return manager;
    }

    /** Publisher thread only: the counter's value, with a release store (readers load it with acquire). */
    void soValue(int counterId, long value) {
        values.putLongRelease(CountersReader.counterOffset(counterId), value);
    }

    /** The epoch millisecond a process started, or 0 if the system does not say. */
    public static long processStartMillis(ProcessHandle process) {
        return process.info().startInstant().map(java.time.Instant::toEpochMilli).orElse(0L);
    }

    /** Makes {@code dir} (and a missing parent) 0700; refuses one another user owns or others may enter. */
    static Path prepareDirectory(Path dir) throws IOException {
        Path parent = dir.getParent();
        if (parent != null && !Files.isDirectory(parent)) {
            try {
                Files.createDirectory(parent, PosixFilePermissions.asFileAttribute(DIR_PERMS));
            } catch (FileAlreadyExistsException ignored) {
                // another process made it meanwhile
            }
        }
        try {
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(DIR_PERMS));
        } catch (FileAlreadyExistsException ignored) {
            // checked below
        }
        PosixFileAttributes attrs = Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        String me = new com.sun.security.auth.module.UnixSystem().getUsername();
        if (!attrs.isDirectory() || !attrs.owner().getName().equals(me) || !attrs.permissions().equals(DIR_PERMS)) {
            throw new IOException("refusing counters directory " + dir + ": it must be a directory owned by " + me
                    + " with mode 0700 (owner " + attrs.owner().getName() + ", "
                    + PosixFilePermissions.toString(attrs.permissions()) + ")");
        }
        return dir;
    }

    /** Deletes counters files whose process is gone (a crash leaves its file behind). */
    private static void removeFilesOfGoneProcesses(Path dir) {
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*" + CountersFileDescriptor.FILE_SUFFIX)) {
            for (Path file : files) {
                CountersFileReader.Result result = CountersFileReader.read(file);
                if (result instanceof CountersFileReader.Snapshot s && !s.alive()) {
                    Files.deleteIfExists(file);
                }
            }
        } catch (IOException | RuntimeException e) {
            // best effort: a stale file only shows in fabricrpc stat, marked gone
        }
    }

    /** Deletes the file, then unmaps it. The publisher must have stopped. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            System.getLogger("fabricrpc").log(System.Logger.Level.WARNING, "cannot delete counters file " + path + ": " + e);
        }
        arena.close();
    }
}
