package io.fabricrpc.transport.rdma.endpoint;

import com.ibm.disni.RdmaActiveEndpoint;
import com.ibm.disni.RdmaActiveEndpointGroup;
import com.ibm.disni.verbs.RdmaCmEvent;
import com.ibm.disni.verbs.RdmaCmId;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketAddress;

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
    private final ConnectDeadline deadline = new ConnectDeadline();

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
        deadline.connect(destination, timeoutMs, () -> super.connect(destination, timeoutMs), this::isConnected);
    }

    @Override
    public synchronized void dispatchCmEvent(RdmaCmEvent event) throws IOException {
        if (!deadline.onCmEvent(event.getEvent())) {
            super.dispatchCmEvent(event);
        }
    }
}
