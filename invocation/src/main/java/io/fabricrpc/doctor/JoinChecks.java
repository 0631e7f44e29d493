package io.fabricrpc.doctor;

import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.transport.Transports;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The cheap checks a process runs before it joins a job (microseconds: a few {@code /proc} reads and one stat):
 * JVM flags; the shm directory and free space for {@code shm}/{@code hybrid}; RLIMIT_MEMLOCK for
 * {@code rdma}/{@code hybrid}. Space and memlock are held to what one peer of this job certainly needs, so a
 * sparse large job is never refused on an estimate; {@code fabricrpc doctor} reports the full-job estimate.
 * Other transport kinds (test doubles) get the JVM check only. Thread-safe.
 */
public final class JoinChecks {
    private static final System.Logger LOG = System.getLogger("fabricrpc.doctor");
    /** Warnings already logged: each at most once per JVM, and at most this many distinct ones. */
    private static final int MAX_LOGGED = 32;
    private static final Set<String> LOGGED = ConcurrentHashMap.newKeySet();

    private JoinChecks() {
    }

    /**
     * Runs the join checks on this machine.
     *
     * @return every result (warnings were logged once)
     * @throws JoinCheckException naming each failing check, what was observed and its fix
     */
    public static List<CheckResult> verify(FabricConfig config) {
        return verify(config, Host.system());
    }

    /** As {@link #verify(FabricConfig)} against {@code host} (tests). */
    public static List<CheckResult> verify(FabricConfig config, Host host) {
        String kind = config.transport().getOrDefault(Transports.KIND_KEY, "shm");
        boolean known = kind.equals("shm") || kind.equals("rdma") || kind.equals("hybrid");
        DoctorContext ctx = new DoctorContext(known ? kind : "shm", config.transport(), 1,
                config.job().threadsPerProcess(), config.messenger(), java.util.Optional.empty(), host);
        List<CheckResult> results = new ArrayList<>();
        results.add(HostChecks.jvmFlags(ctx));
        if (known && ctx.usesShm()) {
            results.add(HostChecks.shmDirectory(ctx));
            results.add(HostChecks.shmSpace(ctx));
        }
        if (known && ctx.usesRdma()) {
            results.add(HostChecks.memlock(ctx));
        }
        List<CheckResult> failures = results.stream().filter(r -> r.status() == Status.FAIL).toList();
        if (!failures.isEmpty()) {
            StringBuilder message = new StringBuilder("this machine cannot run a fabricrpc job with fabric.transport=")
                    .append(kind).append(':');
            for (CheckResult f : failures) {
                message.append("\n  ").append(f.name()).append(": ").append(f.observed())
                        .append("\n    fix: ").append(f.fix());
            }
            message.append("\n(scripts/fabricrpc doctor runs every check and explains each)");
            throw new JoinCheckException(message.toString(), failures);
        }
        for (CheckResult r : results) {
            if (r.status() == Status.WARN && LOGGED.size() < MAX_LOGGED && LOGGED.add(r.name() + r.observed())) {
                LOG.log(System.Logger.Level.WARNING, r.name() + ": " + r.observed() + " (fix: " + r.fix() + ")");
            }
        }
        return results;
    }
}
