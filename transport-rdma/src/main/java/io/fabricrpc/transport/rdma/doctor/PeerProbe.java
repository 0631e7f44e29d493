package io.fabricrpc.transport.rdma.doctor;

import com.ibm.disni.RdmaActiveEndpointGroup;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmId;
import io.fabricrpc.doctor.CheckResult;
import io.fabricrpc.doctor.DoctorContext;
import io.fabricrpc.doctor.Status;
import io.fabricrpc.transport.rdma.endpoint.BoundedConnectEndpoint;
import io.fabricrpc.transport.rdma.nativelib.DisniNativeLibrary;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The {@code rdma-peer} check: one bounded rdma_cm connect to {@code --peer host[:port]}. A REJECTED answer still
 * proves address resolution, routing and the peer's connection manager, so it counts as reachable. The whole
 * probe, group set-up and teardown included, runs on a daemon thread the caller waits for at most
 * {@code rdma.connectTimeoutMillis} + {@value #TEARDOWN_MS} ms.
 */
final class PeerProbe {
    /** Port probed when none is given: any port does, since a rejection also proves reachability. */
    static final int DEFAULT_PORT = 7471;
    static final long TEARDOWN_MS = 5_000;

    private PeerProbe() {
    }

    static CheckResult check(DoctorContext ctx, boolean activePort) {
        if (ctx.peer().isEmpty()) {
            return CheckResult.skip("rdma-peer", "no --peer given");
        }
        if (!ctx.usesRdma()) {
            return CheckResult.skip("rdma-peer", "transport shm does not connect over RDMA");
        }
        if (!activePort) {
            return CheckResult.skip("rdma-peer", "no ACTIVE RDMA port here, so rdma_cm cannot probe "
                    + ctx.peer().get() + " (see rdma-device)");
        }
        InetSocketAddress target;
        try {
            target = parse(ctx.peer().get());
        } catch (IllegalArgumentException e) {
            return new CheckResult("rdma-peer", Status.FAIL, e.getMessage(), "pass --peer host or --peer host:port");
        }
        if (target.isUnresolved()) {
            return new CheckResult("rdma-peer", Status.FAIL, "cannot resolve " + target.getHostString(),
                    "pass the peer's IPv4 address on the RDMA network");
        }
        int timeoutMs = (int) Math.min(600_000, Math.max(1, Long.parseLong(
                ctx.settings().getOrDefault("rdma.connectTimeoutMillis", "3000").trim())));
        CompletableFuture<String> outcome = new CompletableFuture<>();
        Thread worker = new Thread(() -> {
            try {
                outcome.complete(connect(target, timeoutMs));
            } catch (Throwable t) {
                outcome.completeExceptionally(t);
            }
        }, "fabricrpc-doctor-peer-probe");
        worker.setDaemon(true); // a DiSNI call stuck past the deadline must not keep the JVM alive
        worker.start();
        String fix = "check the peer has an RDMA device with an IPv4 address on a network this host routes to "
                + "(ping it, rdma link, ibv_devinfo on both) and set -Drdma.bindAddress on multi-homed hosts";
        try {
            return CheckResult.ok("rdma-peer", outcome.get(timeoutMs + TEARDOWN_MS, TimeUnit.MILLISECONDS));
        } catch (TimeoutException e) {
            return new CheckResult("rdma-peer", Status.FAIL, "no answer from " + target + " within "
                    + (timeoutMs + TEARDOWN_MS) + " ms", fix);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new CheckResult("rdma-peer", Status.FAIL, "interrupted while probing " + target, fix);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            String message = cause instanceof ConnectException && cause.getMessage().contains("REJECTED")
                    ? null : String.valueOf(cause);
            if (message == null) {
                return CheckResult.ok("rdma-peer", "rdma_cm reached " + target + " (address, route and the peer's "
                        + "connection manager answered; nothing listens on port " + target.getPort() + ")");
            }
            return new CheckResult("rdma-peer", Status.FAIL, message, fix);
        }
    }

    static InetSocketAddress parse(String peer) {
        String host = peer.trim();
        int port = DEFAULT_PORT;
        int colon = host.lastIndexOf(':');
        if (colon > 0 && host.indexOf(':') == colon) {
            try {
                port = Integer.parseInt(host.substring(colon + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad port in --peer " + peer);
            }
            host = host.substring(0, colon);
        }
        if (host.isEmpty() || port < 1 || port > 65535) {
            throw new IllegalArgumentException("bad --peer " + peer);
        }
        return new InetSocketAddress(host, port);
    }

    private static String connect(InetSocketAddress target, int timeoutMs) throws Exception {
        DisniNativeLibrary.load();
        RdmaActiveEndpointGroup<ProbeEndpoint> group = new RdmaActiveEndpointGroup<>(timeoutMs, true, 4, 4, 8);
        try {
            group.init((id, serverSide) -> new ProbeEndpoint(group, id, serverSide));
            ProbeEndpoint ep = group.createEndpoint();
            try {
                ep.connect(target, timeoutMs);
                return "connected to " + target + " over rdma_cm";
            } finally {
                ep.close();
            }
        } finally {
            group.close();
        }
    }

    /** An endpoint that only connects: it never posts work, so a completion is unexpected and ignored. */
    static final class ProbeEndpoint extends BoundedConnectEndpoint {
        ProbeEndpoint(RdmaActiveEndpointGroup<ProbeEndpoint> group, RdmaCmId id, boolean serverSide)
                throws IOException {
            super(group, id, serverSide);
        }

        @Override
        public void dispatchCqEvent(IbvWC wc) {
            // nothing posted, nothing to handle
        }
    }
}
