package io.fabricrpc.transport.rdma.endpoint;

import com.ibm.disni.verbs.RdmaCmEvent;

import java.net.ConnectException;
import java.net.SocketAddress;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A deadline for DiSNI's {@code RdmaEndpoint.connect}, which waits for ESTABLISHED with no deadline and ignores
 * REJECTED, UNREACHABLE, CONNECT_ERROR, ADDR_ERROR and ROUTE_ERROR. An endpoint routes its CM events through
 * {@link #onCmEvent}: such an event, or a watchdog at the deadline, interrupts the connecting thread, which then gets a
 * {@link ConnectException} naming the address and the event. Shared by every endpoint class of this module.
 */
public final class ConnectDeadline {
    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "fabricrpc-rdma-connect-watchdog");
        t.setDaemon(true);
        return t;
    });

    /** DiSNI's own connect, called by {@link #connect} on the connecting thread. */
    @FunctionalInterface
    public interface Connector {
        void connect() throws Exception;
    }

    private volatile Thread connecting;
    private volatile RdmaCmEvent.EventType failure;
    private volatile boolean timedOut;

    /**
     * Runs {@code connector} and returns within {@code timeoutMs} with a connection or a {@link ConnectException}.
     *
     * @throws Exception whatever DiSNI throws otherwise (an IOException from the native library, say)
     */
    public void connect(SocketAddress destination, int timeoutMs, Connector connector, BooleanSupplier connected)
            throws Exception {
        Thread self = Thread.currentThread();
        failure = null;
        timedOut = false;
        connecting = self; // volatile: the CM thread and the watchdog read it before interrupting
        ScheduledFuture<?> watchdog = WATCHDOG.schedule(() -> {
            if (connecting == self) {
                timedOut = true;
                self.interrupt();
            }
        }, timeoutMs, TimeUnit.MILLISECONDS);
        try {
            connector.connect();
        } catch (InterruptedException e) {
            RdmaCmEvent.EventType why = failure;
            if (why != null) {
                throw new ConnectException("RDMA connect to " + destination + " failed: " + why
                        + (why == RdmaCmEvent.EventType.RDMA_CM_EVENT_REJECTED ? " (nobody listens on that port?)" : ""));
            }
            if (timedOut) {
                throw new ConnectException("RDMA connect to " + destination + " timed out after " + timeoutMs + " ms");
            }
            throw e;
        } finally {
            connecting = null;
            watchdog.cancel(false);
            Thread.interrupted(); // a late watchdog or CM interrupt must not leak into the caller
        }
        if (!connected.getAsBoolean()) {
            throw new ConnectException("RDMA connect to " + destination + " ended without a connection");
        }
    }

    /**
     * Called first by the endpoint's {@code dispatchCmEvent} (on the CM thread).
     *
     * @return true if the event was a connect failure now handed to the connecting thread (do not dispatch it)
     */
    public boolean onCmEvent(int type) {
        Thread waiter = connecting;
        if (waiter != null && isFailure(type)) {
            failure = RdmaCmEvent.EventType.values()[type];
            waiter.interrupt(); // DiSNI's connect() never wakes up for this event
            return true;
        }
        return false;
    }

    private static boolean isFailure(int type) {
        return type == RdmaCmEvent.EventType.RDMA_CM_EVENT_ADDR_ERROR.ordinal()
                || type == RdmaCmEvent.EventType.RDMA_CM_EVENT_ROUTE_ERROR.ordinal()
                || type == RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_ERROR.ordinal()
                || type == RdmaCmEvent.EventType.RDMA_CM_EVENT_UNREACHABLE.ordinal()
                || type == RdmaCmEvent.EventType.RDMA_CM_EVENT_REJECTED.ordinal();
    }
}
