package io.fabricrpc.doctor;

import io.fabricrpc.api.MessengerConfig;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;

/** Builds fake machines for the doctor tests: a /proc and /sys tree under a temporary root. */
public final class FakeHost {
    public static final JvmView ALL_FLAGS = new JvmView(25, "25.0.1", true, true, true, "allow");
    public static final String LIMITS_HEADER =
            "Limit                     Soft Limit           Hard Limit           Units     \n";

    private FakeHost() {
    }

    public static String limits(String soft, String hard) {
        return LIMITS_HEADER + "Max open files            20000                20000                files     \n"
                + "Max locked memory         " + soft + "              " + hard + "              bytes     \n";
    }

    /** Writes {@code text} at {@code absolute} under {@code root}. */
    public static void write(Path root, String absolute, String text) {
        try {
            Path file = root.resolve(absolute.substring(1));
            Files.createDirectories(file.getParent());
            Files.writeString(file, text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static Host host(Path root, JvmView jvm, long total, long usable, String user) {
        return new Host(root, jvm, dir -> new Host.Space(total, usable), user);
    }

    public static DoctorContext context(String transport, Path shmDir, Host host) {
        return new DoctorContext(transport, Map.of("shm.dir", shmDir.toString()), 2, 1, MessengerConfig.defaults(),
                Optional.empty(), host);
    }
}
