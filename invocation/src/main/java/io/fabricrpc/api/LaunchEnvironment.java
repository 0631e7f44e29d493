package io.fabricrpc.api;

import io.fabricrpc.api.JobConfig.Builder;
import io.fabricrpc.api.JobConfig.Source;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import static io.fabricrpc.api.JobConfig.ENV_ADVERTISED_HOST;
import static io.fabricrpc.api.JobConfig.ENV_BIND_HOST;
import static io.fabricrpc.api.JobConfig.ENV_COORDINATOR;
import static io.fabricrpc.api.JobConfig.ENV_COORDINATOR_PORT;
import static io.fabricrpc.api.JobConfig.ENV_FAILURE_TIMEOUT_MS;
import static io.fabricrpc.api.JobConfig.ENV_HEARTBEAT_MS;
import static io.fabricrpc.api.JobConfig.ENV_JOB_SECRET;
import static io.fabricrpc.api.JobConfig.ENV_JOB_SECRET_FILE;
import static io.fabricrpc.api.JobConfig.ENV_JOIN_TIMEOUT_MS;
import static io.fabricrpc.api.JobConfig.ENV_LOCAL_RANK;
import static io.fabricrpc.api.JobConfig.ENV_RANK;
import static io.fabricrpc.api.JobConfig.ENV_SIZE;
import static io.fabricrpc.api.JobConfig.ENV_THREADS;
import static io.fabricrpc.api.JobConfig.propertyName;

/**
 * Reads a {@link JobConfig} from the launch environment: the explicit {@code FABRICRPC_*} settings (a system
 * property overriding its variable, never for the secret), else Open MPI's {@code OMPI_COMM_WORLD_*}, else Slurm's
 * {@code SLURM_*} variables, in the order and with the defaults the {@link JobConfig} class comment documents.
 * A refusal names the variable to set, or the one that is malformed with its value. Stateless;
 * {@link JobConfig#fromEnvironment} and {@link JobConfig#launchedAsRank} are its public face.
 */
final class LaunchEnvironment {

    /** Under the name it had when this code lived in {@link JobConfig}, so logging configurations still apply. */
    private static final System.Logger LOG = System.getLogger(JobConfig.class.getName());

    private LaunchEnvironment() {
    }

    /** {@return true if {@code FABRICRPC_RANK}, {@code SLURM_PROCID} or {@code OMPI_COMM_WORLD_RANK} is set} */
    static boolean launchedAsRank(Map<String, String> env, Map<String, String> sysprops) {
        return new Lookup(env, sysprops).get(ENV_RANK) != null || env.get("SLURM_PROCID") != null
            || env.get("OMPI_COMM_WORLD_RANK") != null;
    }

    /** {@return a copy of this process's system properties as strings} */
    static Map<String, String> systemProperties() {
        Map<String, String> props = new HashMap<>();
        System.getProperties().forEach((k, v) -> props.put(String.valueOf(k), String.valueOf(v)));
        return props;
    }

    /** The configuration {@link JobConfig#fromEnvironment(Map, Map)} documents; refusals name the variable. */
    static JobConfig read(Map<String, String> env, Map<String, String> sysprops) {
        Lookup in = new Lookup(env, sysprops);
        Builder b = JobConfig.builder();
        String coordinator = in.get(ENV_COORDINATOR);
        String host = null;
        int port = -1;
        if (coordinator != null) {
            int colon = coordinator.lastIndexOf(':');
            boolean bracketed = coordinator.startsWith("[");
            boolean bareIpv6 = !bracketed && coordinator.indexOf(':') != colon;
            if (colon > 0 && !bareIpv6 && (!bracketed || coordinator.lastIndexOf(']') < colon)) {
                host = coordinator.substring(0, colon);
                port = parsePort(ENV_COORDINATOR, coordinator.substring(colon + 1));
            } else {
                host = coordinator;
            }
            if (host.startsWith("[") && host.endsWith("]")) {
                host = host.substring(1, host.length() - 1);
            }
            if (host.isBlank()) {
                throw new IllegalArgumentException(ENV_COORDINATOR + "='" + coordinator + "' has no host");
            }
        }
        if (port < 0 && in.get(ENV_COORDINATOR_PORT) != null) {
            port = parsePort(ENV_COORDINATOR_PORT, in.get(ENV_COORDINATOR_PORT));
        }

        // The variables rank and size came from, so that a bad value is reported under the name the user set.
        String rankVar;
        String sizeVar;
        Source source;
        int rank;
        int size;
        if (in.get(ENV_RANK) != null || in.get(ENV_SIZE) != null) {
            rankVar = ENV_RANK;
            sizeVar = ENV_SIZE;
            source = Source.EXPLICIT;
            rank = in.requireInt(ENV_RANK);
            size = in.requireInt(ENV_SIZE);
            if (host == null) {
                throw new IllegalArgumentException(ENV_COORDINATOR + " is not set: it must name rank 0's host:port");
            }
            if (port < 0) {
                throw new IllegalArgumentException(ENV_COORDINATOR + "='" + coordinator
                    + "' has no port and " + ENV_COORDINATOR_PORT + " is not set");
            }
        } else if (env.get("OMPI_COMM_WORLD_RANK") != null) {
            // Before Slurm: mpirun inside an allocation starts its ranks under daemons that srun launched, so they
            // inherit the daemon's SLURM_PROCID; only the OMPI_COMM_WORLD_* variables name the rank.
            rankVar = "OMPI_COMM_WORLD_RANK";
            sizeVar = "OMPI_COMM_WORLD_SIZE";
            source = Source.OPEN_MPI;
            size = in.requireEnvInt("OMPI_COMM_WORLD_SIZE");
            rank = in.requireEnvInt("OMPI_COMM_WORLD_RANK");
            if (env.get("OMPI_COMM_WORLD_LOCAL_RANK") != null) {
                b.localRank(in.requireEnvInt("OMPI_COMM_WORLD_LOCAL_RANK"));
            }
            if (host == null) {
                String localSize = env.get("OMPI_COMM_WORLD_LOCAL_SIZE");
                if (localSize != null && localSize.trim().equals(String.valueOf(size))) {
                    host = "127.0.0.1";
                } else {
                    throw new IllegalArgumentException("Open MPI job spans several nodes (OMPI_COMM_WORLD_LOCAL_SIZE="
                        + localSize + ", OMPI_COMM_WORLD_SIZE=" + size + "): set " + ENV_COORDINATOR
                        + " to rank 0's host:port");
                }
            }
            if (port < 0) {
                String ns = env.get("PMIX_NAMESPACE");
                if (ns == null) {
                    throw new IllegalArgumentException("PMIX_NAMESPACE is not set: set " + ENV_COORDINATOR_PORT);
                }
                port = derivedPort(ns);
            }
        } else if (env.get("SLURM_PROCID") != null) {
            rankVar = "SLURM_PROCID";
            sizeVar = env.get("SLURM_NTASKS") != null ? "SLURM_NTASKS" : "SLURM_NPROCS";
            source = Source.SLURM;
            rank = in.requireEnvInt(rankVar);
            size = in.requireEnvInt(sizeVar);
            if (env.get("SLURM_LOCALID") != null) {
                b.localRank(in.requireEnvInt("SLURM_LOCALID"));
            }
            if (host == null) {
                String nodes = firstNonNull(env.get("SLURM_STEP_NODELIST"), env.get("SLURM_JOB_NODELIST"),
                    env.get("SLURM_NODELIST"));
                if (nodes == null) {
                    throw new IllegalArgumentException("under Slurm but neither SLURM_STEP_NODELIST nor "
                        + "SLURM_JOB_NODELIST is set: set " + ENV_COORDINATOR + " to rank 0's host:port");
                }
                host = firstSlurmHost(nodes);
            }
            if (port < 0) {
                String job = env.get("SLURM_JOB_ID");
                if (job == null) {
                    throw new IllegalArgumentException("SLURM_JOB_ID is not set: set " + ENV_COORDINATOR_PORT);
                }
                port = derivedPort(job + "." + env.getOrDefault("SLURM_STEP_ID", "0"));
            }
        } else {
            throw new IllegalArgumentException("rank unknown: set " + ENV_RANK + " and " + ENV_SIZE
                + " (and " + ENV_COORDINATOR + "), or launch under Open MPI (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE)"
                + " or Slurm (SLURM_PROCID, SLURM_NTASKS)");
        }
        checkRankAndSize(rank, size, in, rankVar, sizeVar);
        b.source(source).rank(rank).size(size).coordinator(host, port);
        b.threadsPerProcess(threads(env, in, source));
        if (in.get(ENV_LOCAL_RANK) != null) {
            b.localRank(in.requireInt(ENV_LOCAL_RANK));
        }
        b.bindHost(in.get(ENV_BIND_HOST)).advertisedHost(in.get(ENV_ADVERTISED_HOST));
        if (in.get(ENV_HEARTBEAT_MS) != null) {
            b.heartbeatInterval(Duration.ofMillis(in.requireInt(ENV_HEARTBEAT_MS)));
        }
        if (in.get(ENV_FAILURE_TIMEOUT_MS) != null) {
            b.failureTimeout(Duration.ofMillis(in.requireInt(ENV_FAILURE_TIMEOUT_MS)));
        }
        if (in.get(ENV_JOIN_TIMEOUT_MS) != null) {
            b.joinTimeout(Duration.ofMillis(in.requireInt(ENV_JOIN_TIMEOUT_MS)));
        }
        b.jobSecret(readSecret(env, in));
        return b.build();
    }

    /** Rank and size checked where they were read, so the message names the variables and their values. */
    private static void checkRankAndSize(int rank, int size, Lookup in, String rankVar, String sizeVar) {
        if (size < 1) {
            throw new IllegalArgumentException(sizeVar + "='" + in.raw(sizeVar) + "': job size must be >= 1");
        }
        if (rank < 0 || rank >= size) {
            throw new IllegalArgumentException(rankVar + "='" + in.raw(rankVar) + "': rank must be in [0, " + size
                + ") (" + sizeVar + "=" + size + ")");
        }
    }

    /**
     * Worker threads per process: {@code FABRICRPC_THREADS}, else under Slurm {@code SLURM_CPUS_PER_TASK} (the
     * same for every task of a step, and the CPUs Slurm gave each), else 1. Every rank must end with the same
     * count (the coordinator refuses a joiner that differs), so nothing per-node such as the CPU count is used.
     */
    private static int threads(Map<String, String> env, Lookup in, Source source) {
        String name;
        if (in.get(ENV_THREADS) != null) {
            name = ENV_THREADS;
        } else if (source == Source.SLURM && env.get("SLURM_CPUS_PER_TASK") != null) {
            name = "SLURM_CPUS_PER_TASK";
        } else {
            return 1;
        }
        int threads = name.equals(ENV_THREADS) ? in.requireInt(name) : in.requireEnvInt(name);
        if (threads < 1) {
            throw new IllegalArgumentException(name + "='" + in.raw(name) + "': threads per process must be >= 1");
        }
        return threads;
    }

    private static byte[] readSecret(Map<String, String> env, Lookup in) {
        if (in.props.containsKey(propertyName(ENV_JOB_SECRET))) {
            throw new IllegalArgumentException("system property " + propertyName(ENV_JOB_SECRET)
                + " is refused (it would show in the process list): use " + ENV_JOB_SECRET + " or "
                + ENV_JOB_SECRET_FILE);
        }
        String inline = env.get(ENV_JOB_SECRET);
        String file = in.get(ENV_JOB_SECRET_FILE);
        if (inline != null && file != null) {
            throw new IllegalArgumentException("both " + ENV_JOB_SECRET + " and " + ENV_JOB_SECRET_FILE
                + " are set: set only one");
        }
        if (inline != null) {
            if (inline.isEmpty()) {
                throw new IllegalArgumentException(ENV_JOB_SECRET + " is empty");
            }
            return inline.getBytes(StandardCharsets.UTF_8);
        }
        if (file != null) {
            Path path = Path.of(file);
            byte[] bytes;
            try {
                bytes = Files.readAllBytes(path);
            } catch (IOException e) {
                throw new IllegalArgumentException(ENV_JOB_SECRET_FILE + "='" + file + "' cannot be read: " + e, e);
            }
            int len = bytes.length;
            while (len > 0 && (bytes[len - 1] == '\n' || bytes[len - 1] == '\r')) {
                len--;
            }
            if (len == 0) {
                throw new IllegalArgumentException(ENV_JOB_SECRET_FILE + "='" + file + "' is empty");
            }
            refuseIfReadableByOthers(file, path);
            byte[] secret = Arrays.copyOf(bytes, len);
            Arrays.fill(bytes, (byte) 0);
            return secret;
        }
        throw new IllegalArgumentException("no job secret: set " + ENV_JOB_SECRET + " or " + ENV_JOB_SECRET_FILE);
    }

    /** A secret others can read is no secret: refused, with the command that fixes it. */
    private static void refuseIfReadableByOthers(String file, Path path) {
        Set<PosixFilePermission> perms;
        try {
            perms = Files.getPosixFilePermissions(path);
        } catch (IOException | UnsupportedOperationException e) {
            // Not a POSIX file system: nothing to check against.
            LOG.log(System.Logger.Level.DEBUG, () -> "cannot check permissions of " + path, e);
            return;
        }
        if (perms.contains(PosixFilePermission.GROUP_READ) || perms.contains(PosixFilePermission.OTHERS_READ)) {
            throw new IllegalArgumentException(ENV_JOB_SECRET_FILE + "='" + file + "' is readable by group or others ("
                + PosixFilePermissions.toString(perms) + "): run chmod 600 " + file + " (and make a new secret if"
                + " others may have read it)");
        }
    }

    /**
     * First host of a Slurm host list: {@code "node[03-05,9],gpu1" -> "node03"},
     * {@code "rack[1-2]-n[01-04]" -> "rack1-n01"}.
     */
    static String firstSlurmHost(String nodeList) {
        String s = nodeList.trim();
        int depth = 0;
        int end = s.length();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '[') {
                depth++;
            } else if (c == ']') {
                depth--;
            } else if (c == ',' && depth == 0) {
                end = i;
                break;
            }
        }
        String first = s.substring(0, end);
        StringBuilder host = new StringBuilder();
        int i = 0;
        while (i < first.length()) {
            char c = first.charAt(i);
            if (c == '[') {
                int close = first.indexOf(']', i);
                if (close < 0) {
                    throw new IllegalArgumentException("malformed Slurm node list '" + nodeList + "'");
                }
                String range = first.substring(i + 1, close);
                int cut = range.length();
                for (int j = 0; j < range.length(); j++) {
                    if (range.charAt(j) == ',' || range.charAt(j) == '-') {
                        cut = j;
                        break;
                    }
                }
                host.append(range, 0, cut);
                i = close + 1;
            } else {
                host.append(c);
                i++;
            }
        }
        if (host.isEmpty()) {
            throw new IllegalArgumentException("malformed Slurm node list '" + nodeList + "'");
        }
        return host.toString();
    }

    /** A port in [20000, 32000) derived from a job identity, below Linux's default ephemeral range. */
    static int derivedPort(String jobIdentity) {
        return 20000 + Math.floorMod(jobIdentity.hashCode() * 0x9E3779B9, 12000);
    }

    private static int parsePort(String name, String value) {
        int port;
        try {
            port = Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + "='" + value + "': port is not an integer");
        }
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException(name + "='" + value + "': port out of range [0, 65535]");
        }
        return port;
    }

    @SafeVarargs
    private static <T> T firstNonNull(T... values) {
        for (T v : values) {
            if (v != null) {
                return v;
            }
        }
        return null;
    }

    private record Lookup(Map<String, String> env, Map<String, String> props) {
        /** System property first (more specific), then the environment variable. */
        String get(String envName) {
            String v = props.get(propertyName(envName));
            return v != null ? v : env.get(envName);
        }

        int requireInt(String envName) {
            String v = get(envName);
            if (v == null) {
                throw new IllegalArgumentException(envName + " is not set");
            }
            return parseInt(envName, v);
        }

        /** The value as set (system property first), for messages. */
        String raw(String envName) {
            return envName.startsWith("FABRICRPC_") ? get(envName) : env.get(envName);
        }

        int requireEnvInt(String envName) {
            String v = env.get(envName);
            if (v == null) {
                throw new IllegalArgumentException(envName + " is not set");
            }
            return parseInt(envName, v);
        }

        private static int parseInt(String name, String v) {
            try {
                return Integer.parseInt(v.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(name + "='" + v + "' is not an integer");
            }
        }
    }
}
