package io.fabricrpc.transport.rdma.spi;

import com.ibm.disni.RdmaEndpoint;
import com.ibm.disni.RdmaPassiveEndpointGroup;
import com.ibm.disni.RdmaServerEndpoint;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * DiSNI's passive group of {@link QpEndpoint}s, with a close that a connection request cannot deadlock.
 *
 * <p>DiSNI closes a group while holding its monitor, and joins the CM thread inside; a CONNECT_REQUEST that thread is
 * already dispatching needs the same monitor ({@code createEndpoint}), so the join never returns. Here the endpoints
 * are closed and the CM thread is stopped with no monitor held. An endpoint that a late request created meanwhile is
 * dropped, not closed: its CM id went with the event channel, and it never had a QP (nothing accepts it).
 */
final class QpEndpointGroup extends RdmaPassiveEndpointGroup<QpEndpoint> {
    QpEndpointGroup(int cmTimeoutMs, int maxWorkRequests, int maxSge, int cqSize) throws IOException {
        super(cmTimeoutMs, maxWorkRequests, maxSge, cqSize);
    }

    @Override
    public void close() throws IOException, InterruptedException {
        List<RdmaEndpoint> clients;
        List<RdmaServerEndpoint<QpEndpoint>> servers;
        synchronized (this) {
            clients = new ArrayList<>(clientEndpointMap.values());
            servers = new ArrayList<>(serverEndpointMap.values());
        }
        IOException failed = null; // the first; one endpoint failing to close does not keep the others open
        for (RdmaEndpoint endpoint : clients) {
            try {
                endpoint.close(); // a disconnect waits for its event, so the CM thread still runs
            } catch (IOException e) {
                failed = first(failed, e);
            }
        }
        for (RdmaServerEndpoint<QpEndpoint> server : servers) {
            try {
                server.close();
            } catch (IOException e) {
                failed = first(failed, e);
            }
        }
        cmProcessor.close(); // joins the CM thread, then destroys the event channel
        synchronized (this) {
            // Created by a request dispatched meanwhile: their ids must not be touched now that the channel is gone.
            clientEndpointMap.clear();
            serverEndpointMap.clear();
        }
        super.close(); // marks the group closed; nothing is left for it to close
        if (failed != null) {
            throw failed;
        }
    }

    private static IOException first(IOException failed, IOException e) {
        if (failed == null) {
            return e;
        }
        failed.addSuppressed(e);
        return failed;
    }
}
