package io.fabricrpc.fabric;

import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.api.JobConfig;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * A rank of a cross-process test job started by {@link LocalLauncher}. Prints machine-readable lines:
 * {@code JOINED rank=R membership=H}, {@code WAITER_FAILED rank=X at=MICROS} when a waiter polling
 * {@link ControlPlane#checkAlive} sees X gone, {@code SHUTDOWN_OK}.
 *
 * <p>Modes: {@code shutdown} (join, barrier, exit 0), {@code survive} (join, wait until a peer fails, then end
 * with the survivors), {@code exit3} (rank 1 exits with code 3 after joining, the others wait).
 */
public final class FabricTestMain {

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        JobConfig cfg = JobConfig.fromEnvironment();
        int me = cfg.rank();
        ControlPlane cp = ControlPlane.startAndJoin(cfg,
            Map.of("shm", ("descriptor-of-" + me).getBytes(StandardCharsets.UTF_8)));
        Membership m = cp.membership();
        for (int r = 0; r < m.size(); r++) {
            if (!new String(m.descriptor(r, "shm"), StandardCharsets.UTF_8).equals("descriptor-of-" + r)) {
                throw new AssertionError("wrong descriptor for rank " + r + " in " + m);
            }
        }
        System.out.println("JOINED rank=" + me + " membership=" + m.hashCode());
        switch (mode) {
            case "shutdown" -> {
                cp.shutdown();
                System.out.println("SHUTDOWN_OK failures=" + failures(cp));
            }
            case "exit3" -> {
                if (me == 1) {
                    System.exit(3);
                }
                Thread.sleep(30_000);
            }
            case "survive" -> {
                int gone = waitForAFailure(cp, 30_000);
                if (cp.failure(0) == null) {
                    cp.shutdown();
                    System.out.println("SHUTDOWN_OK failures=" + failures(cp));
                } else {
                    System.out.println("COORDINATOR_LOST first=" + gone);
                    cp.close();
                }
            }
            default -> throw new IllegalArgumentException("unknown mode " + mode);
        }
        System.exit(0);
    }

    /** Polls like a fabric wait: cheap liveness checks between idle rounds; returns the first rank seen gone. */
    private static int waitForAFailure(ControlPlane cp, long maxMillis) {
        long deadline = System.nanoTime() + maxMillis * 1_000_000;
        while (System.nanoTime() < deadline) {
            for (int r = 0; r < cp.size(); r++) {
                if (r == cp.rank()) {
                    continue;
                }
                try {
                    cp.checkAlive(r);
                } catch (PeerFailedException e) {
                    Instant now = Instant.now();
                    System.out.println("WAITER_FAILED rank=" + e.rank() + " at="
                        + (now.getEpochSecond() * 1_000_000 + now.getNano() / 1000) + " reason=" + e.reason());
                    return e.rank();
                }
            }
            LockSupport.parkNanos(100_000);
        }
        throw new AssertionError("no peer failed within " + maxMillis + " ms");
    }

    private static String failures(ControlPlane cp) {
        StringBuilder sb = new StringBuilder("[");
        for (int r = 0; r < cp.size(); r++) {
            if (cp.failure(r) != null) {
                sb.append(r).append(' ');
            }
        }
        return sb.append(']').toString();
    }

    private FabricTestMain() {
    }
}
