package io.fabricrpc.fabric;

/** Test-only access to the control plane's fault injection, for suites outside this package. */
public final class FaultInjection {
    private FaultInjection() {
    }

    /** The rank stops sending heartbeats but keeps running: a stalled process, as after SIGSTOP. */
    public static void muteHeartbeats(ControlPlane plane) {
        plane.muteHeartbeatsForTest();
    }
}
