package io.fabricrpc.transport.rdma.spi;

import com.ibm.disni.RdmaEndpoint;
import com.ibm.disni.RdmaEndpointGroup;
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
 * The DiSNI endpoint (one RC QP, its own CQ polled by the link's users) behind one {@link RdmaLink}.
 *
 * <p>Two things DiSNI's {@code RdmaEndpoint} lacks: a connect that ends within its timeout (DiSNI waits forever on
 * REJECTED, UNREACHABLE and the other failure events; here the CM thread or a watchdog interrupts the waiting
 * thread), and forwarding of DISCONNECTED to the link so that it fails.
 */
final class QpEndpoint extends RdmaEndpoint {
    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "fabricrpc-rdma-spi-connect-watchdog");
        t.setDaemon(true);
        return t;
    });

    private volatile RdmaLink link;
    private volatile Thread connecting;
    private volatile RdmaCmEvent.EventType connectFailure;
    private volatile boolean timedOut;
    private boolean cqClosed; // guarded by this

    QpEndpoint(RdmaEndpointGroup<QpEndpoint> group, RdmaCmId id, boolean serverSide) throws IOException {
        super(group, id, serverSide);
    }

    RdmaLink link() {
        return link;
    }

    void attach(RdmaLink owner) {
        this.link = owner; // volatile: the CM thread reads it when an event arrives
    }

    /** Called by DiSNI once the QP exists, before connect or accept: the receive ring must be posted by then. */
    @Override
    protected synchronized void init() throws IOException {
        RdmaLink owner = link;
        if (owner == null) {
            throw new IOException("QP endpoint has no link attached");
        }
        owner.postInitialReceives();
    }

    @Override
    public void connect(SocketAddress destination, int timeoutMs) throws Exception {
        Thread self = Thread.currentThread();
        connectFailure = null;
        timedOut = false;
        connecting = self; // volatile: read by the CM thread and the watchdog before they interrupt
        ScheduledFuture<?> watchdog = WATCHDOG.schedule(() -> {
            if (connecting == self) {
                timedOut = true;
                self.interrupt();
            }
        }, timeoutMs, TimeUnit.MILLISECONDS);
        try {
            super.connect(destination, timeoutMs);
        } catch (InterruptedException e) {
            RdmaCmEvent.EventType why = connectFailure;
            if (why != null) {
                throw new ConnectException("RDMA connect to " + destination + " failed: " + why
                        + (why == RdmaCmEvent.EventType.RDMA_CM_EVENT_REJECTED ? " (nobody listens on that port)" : ""));
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
        if (!isConnected()) {
            throw new ConnectException("RDMA connect to " + destination + " ended without a connection");
        }
    }

    @Override
    public synchronized void dispatchCmEvent(RdmaCmEvent event) throws IOException {
        int type = event.getEvent();
        Thread waiter = connecting;
        if (waiter != null && isConnectFailure(type)) {
            connectFailure = RdmaCmEvent.EventType.values()[type];
            waiter.interrupt(); // DiSNI's connect() would wait for ever
            return;
        }
        if (type == RdmaCmEvent.EventType.RDMA_CM_EVENT_DISCONNECTED.ordinal()) {
            RdmaLink owner = link;
            if (owner != null) {
                owner.fail("the peer closed the connection (RDMA_CM_EVENT_DISCONNECTED)");
            }
        }
        super.dispatchCmEvent(event);
    }

    /** Disconnects, destroys the QP and the CM id, then the CQ DiSNI's passive group made for this endpoint. */
    @Override
    public synchronized void close() throws IOException, InterruptedException {
        super.close();
        if (getCqProvider() != null && !cqClosed) {
            cqClosed = true; // DiSNI's group closes endpoints again on its own close: destroy the CQ once
            getCqProvider().close();
        }
    }

    private static boolean isConnectFailure(int type) {
        return type == RdmaCmEvent.EventType.RDMA_CM_EVENT_ADDR_ERROR.ordinal()
                || type == RdmaCmEvent.EventType.RDMA_CM_EVENT_ROUTE_ERROR.ordinal()
                || type == RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_ERROR.ordinal()
                || type == RdmaCmEvent.EventType.RDMA_CM_EVENT_UNREACHABLE.ordinal()
                || type == RdmaCmEvent.EventType.RDMA_CM_EVENT_REJECTED.ordinal();
    }
}
