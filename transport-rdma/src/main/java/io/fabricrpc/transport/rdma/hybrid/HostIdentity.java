package io.fabricrpc.transport.rdma.hybrid;

import io.fabricrpc.api.TransportException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Which host an endpoint runs on: {@code hybrid.hostId} when configured, else {@code <hostname>/<boot id>} from
 * {@code /proc/sys/kernel/hostname} and {@code /proc/sys/kernel/random/boot_id}. The boot id tells apart machines
 * (and reboots) that share a hostname; the hostname tells apart containers that share a kernel but, usually, not
 * {@code /dev/shm} (containers with the same hostname and separate {@code /dev/shm} must set {@code hybrid.hostId}).
 */
final class HostIdentity {
    static final String HOST_ID_KEY = "hybrid.hostId";
    private static final Path HOSTNAME = Path.of("/proc/sys/kernel/hostname");
    private static final Path BOOT_ID = Path.of("/proc/sys/kernel/random/boot_id");

    private HostIdentity() {
    }

    static String of(Map<String, String> config) {
        String configured = config.get(HOST_ID_KEY);
        if (configured != null) {
            if (configured.isBlank()) {
                throw new TransportException(HOST_ID_KEY + " is blank; leave it unset to use hostname and boot id");
            }
            return configured.trim();
        }
        return read(HOSTNAME) + "/" + read(BOOT_ID);
    }

    private static String read(Path file) {
        try {
            String value = Files.readString(file).trim();
            if (!value.isEmpty()) {
                return value;
            }
            throw new TransportException(file + " is empty: cannot tell which host this endpoint is on; set "
                    + HOST_ID_KEY);
        } catch (IOException e) {
            throw new TransportException("cannot read " + file + " (" + e.getMessage() + ") to tell which host this "
                    + "endpoint is on; set " + HOST_ID_KEY, e);
        }
    }
}
