package io.fabricrpc.doctor;

import io.fabricrpc.api.MessengerConfig;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * Runs every check for a transport: {@link HostChecks} and those of each {@link DoctorCheckProvider} on the class
 * path. Without the RDMA module a {@code rdma} or {@code hybrid} run reports one failing {@code rdma-transport}
 * check instead of silently leaving the RDMA checks out.
 */
public final class Doctor {
    /** Name of the check reported when no provider contributes RDMA checks. */
    public static final String RDMA_TRANSPORT_CHECK = "rdma-transport";

    private Doctor() {
    }

    /** A context for this machine: job shape from FABRICRPC_SIZE / FABRICRPC_THREADS if set, else 2 x 1. */
    public static DoctorContext contextFor(String transport, Map<String, String> settings, Optional<String> peer) {
        return new DoctorContext(transport, settings, positive(System.getenv("FABRICRPC_SIZE"), 2),
                positive(System.getenv("FABRICRPC_THREADS"), 1), MessengerConfig.defaults(), peer, Host.system());
    }

    private static int positive(String value, int fallback) {
        try {
            int n = Integer.parseInt(value == null ? "" : value.trim());
            return n >= 1 ? n : fallback;
        } catch (NumberFormatException e) {
            return fallback;
        }
    }

    /**
     * Every check of this machine, the {@code java} first on the user's PATH included (FABRICRPC_USER_PATH when
     * scripts/fabricrpc put a JDK 25 in front of PATH, else PATH).
     */
    public static Report run(DoctorContext ctx) {
        Report report = run(ctx, ServiceLoader.load(DoctorCheckProvider.class, Doctor.class.getClassLoader()).stream()
                .map(ServiceLoader.Provider::get).toList());
        String userPath = System.getenv("FABRICRPC_USER_PATH");
        List<CheckResult> checks = new ArrayList<>(report.checks());
        checks.add(Math.min(1, checks.size()), PathJava.check(userPath != null ? userPath
                : Optional.ofNullable(System.getenv("PATH")).orElse("")));
        return new Report(report.transport(), checks);
    }

    /** Runs the host checks and {@code providers}' checks; a provider that throws becomes a failing result. */
    public static Report run(DoctorContext ctx, List<DoctorCheckProvider> providers) {
        List<CheckResult> results = new ArrayList<>(HostChecks.all(ctx));
        for (DoctorCheckProvider provider : providers) {
            try {
                results.addAll(provider.checks(ctx));
            } catch (RuntimeException | LinkageError e) {
                results.add(new CheckResult(provider.getClass().getSimpleName(), Status.FAIL,
                        "the check itself failed: " + e, "report this as a fabricrpc bug, with this output"));
            }
        }
        if (providers.isEmpty()) {
            results.add(ctx.usesRdma()
                    ? new CheckResult(RDMA_TRANSPORT_CHECK, Status.FAIL, "transport-rdma is not on the class path",
                    "add the transport-rdma jar (and rdma-core) for fabric.transport=" + ctx.transport())
                    : CheckResult.skip(RDMA_TRANSPORT_CHECK, "transport shm does not use RDMA"));
        }
        return new Report(ctx.transport(), results);
    }
}
