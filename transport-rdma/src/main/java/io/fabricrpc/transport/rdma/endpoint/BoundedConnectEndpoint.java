package io.fabricrpc.transport.rdma.endpoint;

import com.ibm.disni.RdmaActiveEndpoint;
import com.ibm.disni.RdmaActiveEndpointGroup;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketAddress;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A DiSNI active endpoint whose {@link #connect(SocketAddress, int)} always returns or throws within the timeout.
 *
 * <p>DiSNI 2.1's {@code RdmaEndpoint.connect} waits without a deadline for ESTABLISHED and ignores REJECTED,
 * UNREACHABLE, CONNECT_ERROR, ADDR_ERROR and ROUTE_ERROR, so connecting to a port nobody listens on blocks forever.
 * Here the CM thread records such an event and interrupts the connecting thread, and a watchdog does the same at
 * the deadline; the caller gets a {@link ConnectException} naming the address and the event. After a failed
 * connect the endpoint must be {@linkplain #close() closed}.
 *
 * <p>Thread-safety: as DiSNI's endpoint; one thread connects at a time.
 */
public abstract class BoundedConnectEndpoint extends RdmaActiveEndpoint {
    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "fabricrpc-rdma-connect-watchdog");
        t.setDaemon(true);
        return t;
    });

    private volatile Thread connecting;
    private volatile RdmaCmEvent.EventType failure;
    private volatile boolean timedOut;

    protected BoundedConnectEndpoint(RdmaActiveEndpointGroup<? extends RdmaActiveEndpoint> group, RdmaCmId id,
                                     boolean serverSide) throws IOException {
        super(group, id, serverSide);
    }

    /**
     * Connects within {@code timeoutMs} (address and route resolution plus the connection handshake).
     *
     * @throws ConnectException when the peer rejects or cannot be reached, or the deadline passes
     * @throws Exception        whatever DiSNI throws otherwise (for example an IOException from the native library)
     */
    @Override
    public void connect(SocketAddress destination, int timeoutMs) throws Exception {
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
            super.connect(destination, timeoutMs);
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
        }
        if (!isConnected()) {
            throw new ConnectException("RDMA connect to " + destination + " ended without a connection");
        }
    }

    @Override
    public synchronized void dispatchCmEvent(RdmaCmEvent event) throws IOException {
        int type = event.getEvent();
        Thread waiter = connecting;
        if (waiter != null && isFailure(type)) {
            failure = RdmaCmEvent.EventType.values()[type];
            waiter.interrupt(); // DiSNI's connect() waits with no deadline and never wakes up for this event
            return;
        }
        super.dispatchCmEvent(event);
    }

    private static boolean isFailure(int type) {
        return type == RdmaCmEvent.EventType.RDMA_CM_EVENT_ADDR_ERROR.ordinal()
                || type == RdmaCmEvent.EventType.RDMA_CM_EVENT_ROUTE_ERROR.ordinal()
                || type == RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_ERROR.ordinal()
                || type == RdmaCmEvent.EventType.RDMA_CM_EVENT_UNREACHABLE.ordinal()
                || type == RdmaCmEvent.EventType.RDMA_CM_EVENT_REJECTED.ordinal();
    }
}
