package io.fabricrpc.transport;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;

/**
 * JFR: a transport set up a link to a peer (an RDMA connect and handshake, a shared-memory endpoint file opened and
 * mapped), with its duration and outcome. Once per link, never per call.
 */
@Name("fabricrpc.ConnectionSetup")
@Label("Connection set-up")
@Category({"fabricrpc", "Transport"})
@Description("A transport connected to a peer endpoint (RDMA connect and handshake, shared-memory link open)")
public final class ConnectionSetupEvent extends Event {
    @Label("Transport")
    public String transport;
    @Label("Peer")
    public String peer;
    @Label("Outcome")
    @Description("connected, or the failure")
    public String outcome;

    /** Ends the event begun before the set-up and commits it if recording. */
    public void finish(String transport, String peer, String outcome) {
        end();
        if (shouldCommit()) {
            this.transport = transport;
            this.peer = peer;
            this.outcome = outcome;
            commit();
        }
    }
}
