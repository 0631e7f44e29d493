package io.fabricrpc.doctor;

import io.fabricrpc.api.MessengerConfig;

import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What the checks are asked about: the transport kind ({@code shm}, {@code rdma} or {@code hybrid}), the transport
 * settings ({@code shm.dir}, {@code rdma.*}), the job shape used to estimate memory, an optional peer to probe,
 * and the {@link Host}. Immutable.
 *
 * @param transport  {@code shm}, {@code rdma} or {@code hybrid}
 * @param settings   transport keys as in {@code FabricConfig.transport()}
 * @param processes  processes in the job (for estimates; at least 1)
 * @param threads    worker threads per process (for estimates; at least 1)
 * @param messenger  messenger settings (for estimates)
 * @param peer       {@code host} or {@code host:port} to probe over rdma_cm, if any
 * @param host       the machine
 */
public record DoctorContext(String transport, Map<String, String> settings, int processes, int threads,
                            MessengerConfig messenger, Optional<String> peer, Host host) {
    public DoctorContext {
        transport = Objects.requireNonNull(transport, "transport").toLowerCase(Locale.ROOT);
        if (!transport.equals("shm") && !transport.equals("rdma") && !transport.equals("hybrid")) {
            throw new IllegalArgumentException("transport must be shm, rdma or hybrid, got '" + transport + "'");
        }
        settings = Map.copyOf(settings);
        if (processes < 1 || threads < 1) {
            throw new IllegalArgumentException("processes and threads must be >= 1, got " + processes + ", " + threads);
        }
        Objects.requireNonNull(messenger, "messenger");
        Objects.requireNonNull(peer, "peer");
        Objects.requireNonNull(host, "host");
    }

    /** Whether shared memory is used (shm, hybrid). */
    public boolean usesShm() {
        return !transport.equals("rdma");
    }

    /** Whether RDMA is used (rdma, hybrid). */
    public boolean usesRdma() {
        return !transport.equals("shm");
    }

    public DoctorContext withHost(Host newHost) {
        return new DoctorContext(transport, settings, processes, threads, messenger, peer, newHost);
    }
}
