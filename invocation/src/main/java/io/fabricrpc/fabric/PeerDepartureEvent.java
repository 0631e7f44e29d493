package io.fabricrpc.fabric;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;

/** JFR: this process recorded that a peer rank is gone, by an orderly leave or a failure (once per rank). */
@Name("fabricrpc.PeerDeparture")
@Label("Peer departure")
@Category({"fabricrpc", "Control plane"})
@Description("A peer rank left the job or was declared failed")
final class PeerDepartureEvent extends Event {
    @Label("This rank")
    int rank;
    @Label("Departed rank")
    int peer;
    @Label("Orderly leave")
    boolean orderly;
    @Label("Reason")
    String reason;
}
