package io.fabricrpc.api;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * Everything a process needs to join a job: its rank, the job size, threads per process, where the coordinator
 * is, the job secret and the failure-detection timings. Immutable and thread-safe; {@link #toString()} never
 * shows the secret.
 *
 * <p>Built explicitly with {@link #builder()} or read from the launch environment with
 * {@link #fromEnvironment(Map, Map)}, which looks, in this order, at:
 * <ol>
 *   <li>explicit settings: environment variables {@code FABRICRPC_*} (table below); for every variable except the
 *       secret itself a system property of the same name in lower case with dots (e.g.
 *       {@code -Dfabricrpc.coordinator.port=7000}) overrides the variable;</li>
 *   <li>Open MPI ({@code mpirun}): {@code OMPI_COMM_WORLD_RANK}, {@code OMPI_COMM_WORLD_SIZE},
 *       {@code OMPI_COMM_WORLD_LOCAL_RANK}; the coordinator is 127.0.0.1 if every rank is on this node
 *       ({@code OMPI_COMM_WORLD_LOCAL_SIZE == OMPI_COMM_WORLD_SIZE}), otherwise {@code FABRICRPC_COORDINATOR}
 *       must name it; the port is derived from {@code PMIX_NAMESPACE} unless given. Looked at before Slurm: the
 *       ranks of an {@code mpirun} inside a Slurm allocation inherit {@code SLURM_PROCID} from their daemon;</li>
 *   <li>Slurm ({@code srun}): {@code SLURM_PROCID}, {@code SLURM_NTASKS}, {@code SLURM_LOCALID}; the coordinator
 *       host is the first host of {@code SLURM_STEP_NODELIST} (else {@code SLURM_JOB_NODELIST}), where Slurm's
 *       default distribution places task 0; the port is derived from {@code SLURM_JOB_ID}/{@code SLURM_STEP_ID}
 *       unless given.</li>
 * </ol>
 *
 * <table>
 *   <caption>Explicit settings</caption>
 *   <tr><td>{@code FABRICRPC_RANK}, {@code FABRICRPC_SIZE}</td><td>rank and job size (both or neither)</td></tr>
 *   <tr><td>{@code FABRICRPC_COORDINATOR}</td><td>{@code host:port} of rank 0's coordinator (IPv6 as
 *       {@code [::1]:7000}), or {@code host} with the port from {@code FABRICRPC_COORDINATOR_PORT}</td></tr>
 *   <tr><td>{@code FABRICRPC_THREADS}</td><td>long-lived worker threads per process (default: under Slurm
 *       {@code SLURM_CPUS_PER_TASK} when set, else 1; every rank must have the same count)</td></tr>
 *   <tr><td>{@code FABRICRPC_LOCAL_RANK}</td><td>rank among the processes on this node (default unknown)</td></tr>
 *   <tr><td>{@code FABRICRPC_JOB_SECRET}</td><td>the job secret (UTF-8, at least {@value #MIN_SECRET_BYTES}
 *       bytes); never from a system property, which would show in the process list</td></tr>
 *   <tr><td>{@code FABRICRPC_JOB_SECRET_FILE}</td><td>file holding the secret (trailing newline ignored); refused
 *       if group or others may read it (create it with mode 0600)</td></tr>
 *   <tr><td>{@code FABRICRPC_BIND_HOST}, {@code FABRICRPC_ADVERTISED_HOST}</td><td>address rank 0 binds; host
 *       this process is published as</td></tr>
 *   <tr><td>{@code FABRICRPC_HEARTBEAT_MS}, {@code FABRICRPC_FAILURE_TIMEOUT_MS},
 *       {@code FABRICRPC_JOIN_TIMEOUT_MS}</td><td>timings (defaults 100, 3000, 30000)</td></tr>
 * </table>
 */
public final class JobConfig {

    /** Variable holding this process's rank, in [0, size). */
    public static final String ENV_RANK = "FABRICRPC_RANK";
    /** Variable holding the job size (number of processes). */
    public static final String ENV_SIZE = "FABRICRPC_SIZE";
    /** Variable holding the long-lived worker threads per process. */
    public static final String ENV_THREADS = "FABRICRPC_THREADS";
    /** Variable holding the rank among the processes on this node. */
    public static final String ENV_LOCAL_RANK = "FABRICRPC_LOCAL_RANK";
    /** Variable holding {@code host:port} (or {@code host}) of rank 0's coordinator. */
    public static final String ENV_COORDINATOR = "FABRICRPC_COORDINATOR";
    /**
     * Variable holding the coordinator port, used if {@link #ENV_COORDINATOR} names none (instead of a port derived
     * under Slurm or Open MPI).
     */
    public static final String ENV_COORDINATOR_PORT = "FABRICRPC_COORDINATOR_PORT";
    /** Variable holding the address rank 0's coordinator binds. */
    public static final String ENV_BIND_HOST = "FABRICRPC_BIND_HOST";
    /** Variable holding the host this process is published as. */
    public static final String ENV_ADVERTISED_HOST = "FABRICRPC_ADVERTISED_HOST";
    /** Variable holding the job secret as UTF-8 text (never read from a system property). */
    public static final String ENV_JOB_SECRET = "FABRICRPC_JOB_SECRET";
    /** Variable holding the path of a file with the job secret, readable by its owner only. */
    public static final String ENV_JOB_SECRET_FILE = "FABRICRPC_JOB_SECRET_FILE";
    /** Variable holding the heartbeat interval in milliseconds. */
    public static final String ENV_HEARTBEAT_MS = "FABRICRPC_HEARTBEAT_MS";
    /** Variable holding the failure timeout in milliseconds. */
    public static final String ENV_FAILURE_TIMEOUT_MS = "FABRICRPC_FAILURE_TIMEOUT_MS";
    /** Variable holding the join timeout in milliseconds. */
    public static final String ENV_JOIN_TIMEOUT_MS = "FABRICRPC_JOIN_TIMEOUT_MS";

    /** Shortest accepted job secret. */
    public static final int MIN_SECRET_BYTES = 16;
    /** Default heartbeat interval: 100 ms. */
    public static final Duration DEFAULT_HEARTBEAT_INTERVAL = Duration.ofMillis(100);
    /** Default failure timeout: 3 s. */
    public static final Duration DEFAULT_FAILURE_TIMEOUT = Duration.ofMillis(3000);
    /** Default join timeout: 30 s. */
    public static final Duration DEFAULT_JOIN_TIMEOUT = Duration.ofSeconds(30);

    /** Where the rank and size came from. */
    public enum Source {
        /** Set explicitly: a {@link Builder} or the {@code FABRICRPC_*} variables. */
        EXPLICIT,
        /** Slurm's {@code srun}: {@code SLURM_PROCID}, {@code SLURM_NTASKS}. */
        SLURM,
        /** Open MPI's {@code mpirun}: {@code OMPI_COMM_WORLD_RANK}, {@code OMPI_COMM_WORLD_SIZE}. */
        OPEN_MPI
    }

    private final int rank;
    private final int size;
    private final int threadsPerProcess;
    private final int localRank;
    private final String coordinatorHost;
    private final int coordinatorPort;
    private final String bindHost;
    private final String advertisedHost;
    private final byte[] jobSecret;
    private final Duration heartbeatInterval;
    private final Duration failureTimeout;
    private final Duration joinTimeout;
    private final Source source;

    private JobConfig(Builder b) {
        this.rank = b.rank;
        this.size = b.size;
        this.threadsPerProcess = b.threadsPerProcess;
        this.localRank = b.localRank;
        this.coordinatorHost = b.coordinatorHost;
        this.coordinatorPort = b.coordinatorPort;
        this.bindHost = b.bindHost;
        this.advertisedHost = b.advertisedHost;
        this.jobSecret = b.jobSecret == null ? null : b.jobSecret.clone();
        this.heartbeatInterval = b.heartbeatInterval;
        this.failureTimeout = b.failureTimeout;
        this.joinTimeout = b.joinTimeout;
        this.source = b.source;
    }

    /** {@return this process's rank in the job, in [0, size)} */
    public int rank() {
        return rank;
    }

    /** {@return the job size: the number of processes, at least 1} */
    public int size() {
        return size;
    }

    /** {@return the long-lived worker threads per process, at least 1 and the same on every rank} */
    public int threadsPerProcess() {
        return threadsPerProcess;
    }

    /** {@return the rank among the processes of this job on this node, or -1 if unknown} */
    public int localRank() {
        return localRank;
    }

    /** {@return true for rank 0, which runs the coordinator} */
    public boolean isCoordinator() {
        return rank == 0;
    }

    /** {@return the host of rank 0's coordinator} */
    public String coordinatorHost() {
        return coordinatorHost;
    }

    /**
     * {@return the coordinator port} 0 (rank 0 only) binds an ephemeral port, see
     * {@link io.fabricrpc.fabric.ControlPlane#coordinatorPort()}.
     */
    public int coordinatorPort() {
        return coordinatorPort;
    }

    /**
     * {@return the address rank 0 binds, or null for the default (the coordinator host if loopback, else all
     * interfaces)}
     */
    public String bindHost() {
        return bindHost;
    }

    /**
     * {@return the host this process is published as in the membership, or null to use the address the coordinator
     * sees}
     */
    public String advertisedHost() {
        return advertisedHost;
    }

    /** {@return true if a job secret is configured} */
    public boolean hasJobSecret() {
        return jobSecret != null;
    }

    /** {@return a copy of the job secret, or null if none is configured} */
    public byte[] jobSecret() {
        return jobSecret == null ? null : jobSecret.clone();
    }

    /** {@return the interval of the heartbeats between each rank and the coordinator (default 100 ms)} */
    public Duration heartbeatInterval() {
        return heartbeatInterval;
    }

    /**
     * {@return how long a rank, or the coordinator, may send nothing before it is declared failed (default 3 s)} At
     * least twice the heartbeat interval.
     */
    public Duration failureTimeout() {
        return failureTimeout;
    }

    /** {@return the longest wait for the job to form; also bounds the shutdown barrier (default 30 s)} */
    public Duration joinTimeout() {
        return joinTimeout;
    }

    /** {@return where the rank and size came from} */
    public Source source() {
        return source;
    }

    /**
     * {@return a builder initialised with this configuration (to change e.g. the port after binding an ephemeral
     * one)}
     */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.rank = rank;
        b.size = size;
        b.threadsPerProcess = threadsPerProcess;
        b.localRank = localRank;
        b.coordinatorHost = coordinatorHost;
        b.coordinatorPort = coordinatorPort;
        b.bindHost = bindHost;
        b.advertisedHost = advertisedHost;
        b.jobSecret = jobSecret == null ? null : jobSecret.clone();
        b.heartbeatInterval = heartbeatInterval;
        b.failureTimeout = failureTimeout;
        b.joinTimeout = joinTimeout;
        b.source = source;
        return b;
    }

    @Override
    public String toString() {
        return "JobConfig{rank=" + rank + ", size=" + size + ", threadsPerProcess=" + threadsPerProcess
            + ", localRank=" + localRank + ", coordinator=" + coordinatorHost + ":" + coordinatorPort
            + (bindHost != null ? ", bindHost=" + bindHost : "")
            + (advertisedHost != null ? ", advertisedHost=" + advertisedHost : "")
            + ", jobSecret=" + (jobSecret == null ? "<none>" : "<redacted>")
            + ", heartbeat=" + heartbeatInterval.toMillis() + "ms, failureTimeout=" + failureTimeout.toMillis()
            + "ms, joinTimeout=" + joinTimeout.toMillis() + "ms, source=" + source + "}";
    }

    /**
     * {@return a builder with nothing set but the defaults} Rank, size and coordinator must be set; one thread per
     * process, no local rank, no secret and the default timings unless set.
     */
    public static Builder builder() {
        return new Builder();
    }

    /** Explicit configuration. Not thread-safe. */
    public static final class Builder {
        private int rank = -1;
        private int size = -1;
        private int threadsPerProcess = 1;
        private int localRank = -1;
        private String coordinatorHost;
        private int coordinatorPort = -1;
        private String bindHost;
        private String advertisedHost;
        private byte[] jobSecret;
        private Duration heartbeatInterval = DEFAULT_HEARTBEAT_INTERVAL;
        private Duration failureTimeout = DEFAULT_FAILURE_TIMEOUT;
        private Duration joinTimeout = DEFAULT_JOIN_TIMEOUT;
        private Source source = Source.EXPLICIT;

        private Builder() {
        }

        /**
         * Sets this process's rank (required).
         *
         * @param rank the rank, in [0, size)
         * @return this builder
         */
        public Builder rank(int rank) {
            this.rank = rank;
            return this;
        }

        /**
         * Sets the job size (required).
         *
         * @param size the number of processes in the job, at least 1
         * @return this builder
         */
        public Builder size(int size) {
            this.size = size;
            return this;
        }

        /**
         * Sets the long-lived worker threads per process (default 1).
         *
         * @param threads at least 1, the same on every rank
         * @return this builder
         */
        public Builder threadsPerProcess(int threads) {
            this.threadsPerProcess = threads;
            return this;
        }

        /**
         * Sets the rank among the processes of this job on this node (default -1, unknown).
         *
         * @param localRank the local rank, or -1 if unknown
         * @return this builder
         */
        public Builder localRank(int localRank) {
            this.localRank = localRank;
            return this;
        }

        /**
         * Sets where rank 0's coordinator listens (required).
         *
         * @param host host name or address of rank 0, not blank
         * @param port in [0, 65535]; 0 (rank 0 only) binds an ephemeral port
         * @return this builder
         */
        public Builder coordinator(String host, int port) {
            this.coordinatorHost = host;
            this.coordinatorPort = port;
            return this;
        }

        /**
         * Sets the address rank 0 binds.
         *
         * @param bindHost the address, or null for the default (the coordinator host if loopback, else all
         *        interfaces)
         * @return this builder
         */
        public Builder bindHost(String bindHost) {
            this.bindHost = bindHost;
            return this;
        }

        /**
         * Sets the host this process is published as in the membership.
         *
         * @param advertisedHost the host, or null to use the address the coordinator sees
         * @return this builder
         */
        public Builder advertisedHost(String advertisedHost) {
            this.advertisedHost = advertisedHost;
            return this;
        }

        /**
         * The job secret (copied), or null for none; a joiner without a secret is refused by the coordinator.
         *
         * @param secret at least {@value #MIN_SECRET_BYTES} bytes, or null
         * @return this builder
         */
        public Builder jobSecret(byte[] secret) {
            this.jobSecret = secret == null ? null : secret.clone();
            return this;
        }

        /**
         * The job secret as UTF-8 text.
         *
         * @param secret at least {@value #MIN_SECRET_BYTES} bytes in UTF-8, or null for none
         * @return this builder
         */
        public Builder jobSecret(String secret) {
            return jobSecret(secret == null ? null : secret.getBytes(StandardCharsets.UTF_8));
        }

        /**
         * Sets the interval of the heartbeats between each rank and the coordinator.
         *
         * @param d positive (default 100 ms)
         * @return this builder
         */
        public Builder heartbeatInterval(Duration d) {
            this.heartbeatInterval = Objects.requireNonNull(d);
            return this;
        }

        /**
         * Sets how long a rank, or the coordinator, may send nothing before it is declared failed.
         *
         * @param d at least twice the heartbeat interval (default 3 s)
         * @return this builder
         */
        public Builder failureTimeout(Duration d) {
            this.failureTimeout = Objects.requireNonNull(d);
            return this;
        }

        /**
         * Sets the longest wait for the job to form (it also bounds the shutdown barrier).
         *
         * @param d positive (default 30 s)
         * @return this builder
         */
        public Builder joinTimeout(Duration d) {
            this.joinTimeout = Objects.requireNonNull(d);
            return this;
        }

        Builder source(Source source) {
            this.source = source;
            return this;
        }

        /**
         * Checks the settings and builds the configuration.
         *
         * @return the configuration
         * @throws IllegalArgumentException naming the offending value
         */
        public JobConfig build() {
            if (size < 1) {
                throw new IllegalArgumentException("job size must be >= 1, got " + size);
            }
            if (rank < 0 || rank >= size) {
                throw new IllegalArgumentException("rank must be in [0, " + size + "), got " + rank);
            }
            if (threadsPerProcess < 1) {
                throw new IllegalArgumentException("threadsPerProcess must be >= 1, got " + threadsPerProcess);
            }
            if (coordinatorHost == null || coordinatorHost.isBlank()) {
                throw new IllegalArgumentException("coordinator host is not set");
            }
            if (coordinatorPort < 0 || coordinatorPort > 65535) {
                throw new IllegalArgumentException("coordinator port must be in [0, 65535], got " + coordinatorPort);
            }
            if (coordinatorPort == 0 && rank != 0) {
                throw new IllegalArgumentException("coordinator port 0 (ephemeral) is only valid for rank 0; rank "
                    + rank + " must be given the port rank 0 bound");
            }
            if (jobSecret != null && jobSecret.length < MIN_SECRET_BYTES) {
                throw new IllegalArgumentException("job secret is " + jobSecret.length + " bytes; at least "
                    + MIN_SECRET_BYTES + " are required");
            }
            if (heartbeatInterval.isNegative() || heartbeatInterval.isZero()) {
                throw new IllegalArgumentException("heartbeat interval must be positive, got " + heartbeatInterval);
            }
            if (failureTimeout.compareTo(heartbeatInterval.multipliedBy(2)) < 0) {
                throw new IllegalArgumentException("failure timeout " + failureTimeout.toMillis()
                    + " ms must be at least twice the heartbeat interval " + heartbeatInterval.toMillis() + " ms");
            }
            if (joinTimeout.isNegative() || joinTimeout.isZero()) {
                throw new IllegalArgumentException("join timeout must be positive, got " + joinTimeout);
            }
            return new JobConfig(this);
        }
    }

    // ---------------------------------------------------------------- environment (read by LaunchEnvironment)

    /**
     * True if this process was started as one rank of a job: {@code FABRICRPC_RANK} (variable or system property),
     * {@code srun} ({@code SLURM_PROCID}) or {@code mpirun} ({@code OMPI_COMM_WORLD_RANK}). A program that launches
     * its own job when started by hand asks this first.
     *
     * @param env the environment variables, e.g. {@link System#getenv()}
     * @param sysprops the system properties
     * @return true if a rank is given by any of them
     */
    public static boolean launchedAsRank(Map<String, String> env, Map<String, String> sysprops) {
        return LaunchEnvironment.launchedAsRank(env, sysprops);
    }

    /**
     * {@link #launchedAsRank(Map, Map)} over this process's environment and system properties.
     *
     * @return true if this process was started as one rank of a job
     */
    public static boolean launchedAsRank() {
        return launchedAsRank(System.getenv(), LaunchEnvironment.systemProperties());
    }

    /**
     * {@link #fromEnvironment(Map, Map)} over {@link System#getenv()} and {@link System#getProperties()}.
     *
     * @return the configuration
     * @throws IllegalArgumentException naming the missing or malformed variable
     */
    public static JobConfig fromEnvironment() {
        return fromEnvironment(System.getenv(), LaunchEnvironment.systemProperties());
    }

    /**
     * Reads the configuration from an environment and system properties (see the class comment for the order).
     *
     * @param env the environment variables
     * @param sysprops the system properties; one named by {@link #propertyName} overrides its variable (refused for
     *        the secret)
     * @return the configuration
     * @throws IllegalArgumentException naming the missing or malformed variable
     */
    public static JobConfig fromEnvironment(Map<String, String> env, Map<String, String> sysprops) {
        return LaunchEnvironment.read(env, sysprops);
    }

    /**
     * System property name for an environment variable:
     * {@code FABRICRPC_COORDINATOR_PORT -> fabricrpc.coordinator.port}.
     *
     * @param envName the variable's name
     * @return the name in lower case with dots for underscores
     */
    public static String propertyName(String envName) {
        return envName.toLowerCase(java.util.Locale.ROOT).replace('_', '.');
    }
}
