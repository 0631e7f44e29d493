package io.fabricrpc.fabric;

import io.fabricrpc.counters.CounterTypes;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The control plane's counts for the counters file: heartbeats sent and received (plain fields of the control plane's
 * one event-loop thread) and peers declared failed (counted under the control plane's listener lock). The publisher
 * reads them with opaque loads.
 */
final class ControlCounters {
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

    /** The counters file's view of these fields. */
    io.fabricrpc.counters.CounterSet asCounters() {
        return new io.fabricrpc.counters.CounterSet(
                new io.fabricrpc.counters.CounterSet.Counter("heartbeats sent " + rank, CounterTypes.HEARTBEATS_SENT,
                        () -> (long) SENT.getOpaque(this)),
                new io.fabricrpc.counters.CounterSet.Counter("heartbeats received " + rank,
                        CounterTypes.HEARTBEATS_RECEIVED, () -> (long) RECEIVED.getOpaque(this)),
                new io.fabricrpc.counters.CounterSet.Counter("peer failures seen " + rank, CounterTypes.PEER_FAILURES,
                        () -> (long) FAILURES.getOpaque(this)));
    }
}
