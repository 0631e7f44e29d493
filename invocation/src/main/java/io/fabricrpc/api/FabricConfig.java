package io.fabricrpc.api;


import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * Everything a process needs to join a job: who it is ({@link JobConfig}: rank, size, threads, coordinator,
 * secret), which transport ({@code fabric.transport} and the transport's keys), what may be serialized, and the
 * messenger settings. Every process must use the same registry and messenger settings (checked at join).
 *
 * @param job who this process is: rank, size, threads, coordinator, secret, timeouts
 * @param transport the transport's keys ({@code fabric.transport}, {@code shm.*}, {@code rdma.*}, {@code memory.*},
 *        {@code fabric.jit.directives})
 * @param registry what calls may capture and results may hold
 * @param messenger chunk sizes, full policy, timeouts of the messengers
 * @param returnSlotBytes bytes of each {@code callReturn} result slot, a multiple of 64; 19 of them are header
 * @param callTimeout the longest wait for a {@code callReturn} result or a full message queue
 */
public record FabricConfig(JobConfig job, Map<String, String> transport, SerializationRegistry registry,
                           MessengerConfig messenger, int returnSlotBytes, Duration callTimeout) {
    /**
     * Checks the settings.
     *
     * @throws IllegalArgumentException if {@code returnSlotBytes} is not a multiple of 64 of at least 64, or the
     *         timeout is not positive
     */
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
     *
     * @param registry what calls may capture and results may hold
     * @return the configuration
     * @throws IllegalArgumentException if the environment does not name this process's rank and the job's size, or
     *         no job secret
     */
    public static FabricConfig fromEnvironment(SerializationRegistry registry) {
        return of(JobConfig.fromEnvironment(), registry);
    }

    /**
     * Defaults around an explicit job: transport keys from system properties, 1 KiB mailbox packets, 60 s timeout.
     *
     * @param job who this process is
     * @param registry what calls may capture and results may hold
     * @return the configuration
     */
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

    /**
     * This configuration with other messenger settings.
     *
     * @param newMessenger the messenger settings, the same on every process
     * @return a new configuration
     */
    public FabricConfig withMessenger(MessengerConfig newMessenger) {
        return new FabricConfig(job, transport, registry, newMessenger, returnSlotBytes, callTimeout);
    }

    /**
     * This configuration with other transport keys (replacing those read from system properties).
     *
     * @param newTransport the keys, e.g. {@code fabric.transport=rdma}
     * @return a new configuration
     */
    public FabricConfig withTransport(Map<String, String> newTransport) {
        return new FabricConfig(job, newTransport, registry, messenger, returnSlotBytes, callTimeout);
    }

    /**
     * Bytes of each {@code callReturn} mailbox packet (the name is historical: results used to land in slots of this
     * size). Calls and results larger than a packet stream through it, up to {@code fabric.mailbox.maxMessageBytes}
     * (16 MiB); a larger result fails with {@link io.fabricrpc.api.ResultTooLargeException}. Every process
     * of a job must use the same value.
     *
     * @param bytes a multiple of 64, at least 64 (default 1024)
     * @return a new configuration
     */
    public FabricConfig withReturnSlotBytes(int bytes) {
        return new FabricConfig(job, transport, registry, messenger, bytes, callTimeout);
    }

    /**
     * This configuration with another call timeout.
     *
     * @param timeout the longest wait for a {@code callReturn} result or a full message queue (default 60 s)
     * @return a new configuration
     */
    public FabricConfig withCallTimeout(Duration timeout) {
        return new FabricConfig(job, transport, registry, messenger, returnSlotBytes, timeout);
    }
}
