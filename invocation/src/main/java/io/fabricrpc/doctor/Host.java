package io.fabricrpc.doctor;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The machine as the checks see it: {@code /proc} and {@code /sys} under {@link #root()} (the real root, or a fake
 * tree in tests), the running JVM, free space of a directory and the user name. Immutable; reads are not cached.
 *
 * @param root  prefix of {@code /proc} and {@code /sys} ({@code /} on a real machine)
 * @param jvm   what the JVM has in effect
 * @param space free-space provider (statvfs-like)
 * @param user  the user name as the shm transport spells it (before sanitising)
 */
public record Host(Path root, JvmView jvm, SpaceProvider space, String user) {
    private static final int MAX_READ = 1 << 20;

    /** Size and free bytes of the file system holding a directory. */
    public record Space(long totalBytes, long usableBytes) {
    }

    /** Reports the file system of a directory; throws when it cannot be examined. */
    @FunctionalInterface
    public interface SpaceProvider {
        Space of(Path directory) throws IOException;
    }

    /** This machine and this JVM. */
    public static Host system() {
        return new Host(Path.of("/"), JvmView.current(), Host::fileStoreSpace, currentUser());
    }

    /** {@code absolute} (e.g. {@code /proc/self/limits}) under {@link #root()}. */
    public Path path(String absolute) {
        return root.resolve(absolute.startsWith("/") ? absolute.substring(1) : absolute);
    }

    /** The file's text, or empty when it is missing or unreadable (a check then says so). */
    public Optional<String> read(String absolute) {
        return readText(path(absolute));
    }

    /**
     * At most 1 MiB of a file's text, in reads of 8 KiB. Not Files.readString: for a size-0 file JDK 25 reads one
     * byte first, and /proc/sys files answer EOF at any later offset ("6" for a max_map_count of 65530).
     */
    public static Optional<String> readText(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            return Optional.of(new String(in.readNBytes(MAX_READ), StandardCharsets.UTF_8));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    static Space fileStoreSpace(Path directory) throws IOException {
        FileStore store = Files.getFileStore(directory);
        return new Space(store.getTotalSpace(), store.getUsableSpace());
    }

    private static String currentUser() {
        try {
            // The name the shm transport uses for <shm.dir>/fabricrpc-<user>, which may differ from user.name.
            return new com.sun.security.auth.module.UnixSystem().getUsername();
        } catch (RuntimeException | LinkageError e) {
            return System.getProperty("user.name", "unknown");
        }
    }
}
