package io.fabricrpc.fabric;

/** Reaches the control plane's test hooks from other packages' tests (and the transport modules' suites). */
public final class ControlPlaneHooks {
    private ControlPlaneHooks() {
    }

    /** Simulates a crash of the process owning {@code plane}: its connections drop without a LEAVE. */
    public static void crash(ControlPlane plane) {
        plane.abortForTest();
    }
}
