package io.fabricrpc.api;

import io.fabricrpc.fabric.JobConfig;
import io.fabricrpc.messaging.MessengerConfig;
import io.fabricrpc.serialization.SerializationRegistry;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * Everything a process needs to join a job: who it is ({@link JobConfig}: rank, size, threads, coordinator,
 * secret), which transport ({@code fabric.transport} and the transport's keys), what may be serialized, and the
 * messenger settings. Every process must use the same registry and messenger settings (checked at join).
 */
public record FabricConfig(JobConfig job, Map<String, String> transport, SerializationRegistry registry,
                           MessengerConfig messenger, int returnSlotBytes, Duration callTimeout) {
    public FabricConfig {
        transport = Map.copyOf(transport);
        if (returnSlotBytes < 64 || returnSlotBytes % 64 != 0) {
            throw new IllegalArgumentException("returnSlotBytes must be a multiple of 64, >= 64, got " + returnSlotBytes);
        }
        if (callTimeout.isNegative() || callTimeout.isZero()) {
            throw new IllegalArgumentException("callTimeout must be positive, got " + callTimeout);
        }
    }

    /**
     * The job from the environment (explicit {@code FABRICRPC_*} variables, Slurm or Open MPI), the transport from
     * system properties ({@code fabric.transport}, {@code shm.*}, {@code rdma.*}, {@code memory.*}; shared memory by
     * default), and
     * default messenger settings.
     */
    public static FabricConfig fromEnvironment(SerializationRegistry registry) {
        return of(JobConfig.fromEnvironment(), registry);
    }

    /** Defaults around an explicit job: transport keys from system properties, 1 KiB mailbox packets, 60 s timeout. */
    public static FabricConfig of(JobConfig job, SerializationRegistry registry) {
        Map<String, String> transport = new HashMap<>();
        System.getProperties().forEach((k, v) -> {
            String key = k.toString();
            if (key.startsWith("fabric.") || key.startsWith("shm.") || key.startsWith("rdma.") || key.startsWith("memory.")) {
                transport.put(key, v.toString());
            }
        });
        return new FabricConfig(job, transport, registry, MessengerConfig.defaults(), 1024, Duration.ofSeconds(60));
    }

    public FabricConfig withMessenger(MessengerConfig newMessenger) {
        return new FabricConfig(job, transport, registry, newMessenger, returnSlotBytes, callTimeout);
    }

    public FabricConfig withTransport(Map<String, String> newTransport) {
        return new FabricConfig(job, newTransport, registry, messenger, returnSlotBytes, callTimeout);
    }

    /**
     * Bytes of each {@code callReturn} mailbox packet (the name is historical: results used to land in slots of this
     * size). Calls and results larger than a packet stream through it, up to {@code fabric.mailbox.maxMessageBytes}
     * (16 MiB); every process of a job must use the same value.
     */
    public FabricConfig withReturnSlotBytes(int bytes) {
        return new FabricConfig(job, transport, registry, messenger, bytes, callTimeout);
    }

    public FabricConfig withCallTimeout(Duration timeout) {
        return new FabricConfig(job, transport, registry, messenger, returnSlotBytes, timeout);
    }
}
