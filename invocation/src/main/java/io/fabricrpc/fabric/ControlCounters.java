package io.fabricrpc.fabric;

import io.fabricrpc.counters.CounterSource;
import io.fabricrpc.counters.CounterTypes;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The control plane's counts for the counters file: heartbeats sent and received (plain fields of the control plane's
 * one event-loop thread) and peers declared failed (counted under the control plane's listener lock). The publisher
 * reads them with opaque loads.
 */
final class ControlCounters implements CounterSource {
    private static final VarHandle SENT;
    private static final VarHandle RECEIVED;
    private static final VarHandle FAILURES;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            SENT = lookup.findVarHandle(ControlCounters.class, "heartbeatsSent", long.class);
            RECEIVED = lookup.findVarHandle(ControlCounters.class, "heartbeatsReceived", long.class);
            FAILURES = lookup.findVarHandle(ControlCounters.class, "peerFailures", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final String rank;
    long heartbeatsSent; // event loop only
    long heartbeatsReceived; // event loop only
    long peerFailures; // under ControlPlane's listener lock

    ControlCounters(int rank) {
        this.rank = "rank " + rank;
    }

    @Override
    public int counterCount() {
        return 3;
    }

    @Override
    public String label(int index) {
        return switch (index) {
            case 0 -> "heartbeats sent " + rank;
            case 1 -> "heartbeats received " + rank;
            default -> "peer failures seen " + rank;
        };
    }

    @Override
    public int typeId(int index) {
        return switch (index) {
            case 0 -> CounterTypes.HEARTBEATS_SENT;
            case 1 -> CounterTypes.HEARTBEATS_RECEIVED;
            default -> CounterTypes.PEER_FAILURES;
        };
    }

    @Override
    public long loValue(int index) {
        return (long) (switch (index) {
            case 0 -> SENT;
            case 1 -> RECEIVED;
            default -> FAILURES;
        }).getOpaque(this);
    }
}
