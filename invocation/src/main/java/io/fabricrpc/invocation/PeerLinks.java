package io.fabricrpc.invocation;

import io.fabricrpc.fabric.ControlPlane;
import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.messaging.MessagingNode;
import io.fabricrpc.transport.EndpointAddress;
import io.fabricrpc.transport.Link;
import io.fabricrpc.transport.Transport;

/**
 * The links to the job's processes, connected on first use, and fencing: once the control plane declares a rank
 * failed, sends to it fail and its calls are no longer run here. A link slot is written by whichever thread connects
 * first; the transport returns its one link per peer, so a race stores the same link twice, harmlessly.
 */
final class PeerLinks {
    private final Transport transport;
    private final MessagingNode node;
    private final ControlPlane control;
    private final EndpointAddress[] addresses;
    private final java.util.concurrent.atomic.AtomicReferenceArray<Link> links;

    PeerLinks(Transport transport, MessagingNode node, ControlPlane control, EndpointAddress[] addresses) {
        this.transport = transport;
        this.node = node;
        this.control = control;
        this.addresses = addresses;
        this.links = new java.util.concurrent.atomic.AtomicReferenceArray<>(addresses.length);
    }

    EndpointAddress address(int rank) {
        return addresses[rank];
    }

    Link link(int destinationRank) {
        Link link = links.getAcquire(destinationRank);
        if (link == null) {
            link = transport.connect(addresses[destinationRank]); // idempotent per peer; the race is benign
            links.set(destinationRank, link); // a volatile store, before the check below: fence() or this sees the other
            if (!control.isAlive(destinationRank)) { // declared failed meanwhile: fence() may have missed this link
                link.fence("the job declared rank " + destinationRank + " failed");
            }
        }
        return link;
    }

    /** True once the job declared {@code rank} failed or it left (a volatile read). */
    boolean isGone(int rank) {
        return !control.isAlive(rank);
    }

    /** Throws if the job declared {@code destinationRank} failed or its link is broken. */
    void checkAlive(int destinationRank) {
        control.checkAlive(destinationRank);
        Link link = links.getAcquire(destinationRank);
        if (link != null) {
            link.checkAlive();
        }
    }

    /**
     * The control plane's verdict reaches the data plane: sends to the rank fail from now on (its link is fenced),
     * and calls from its threads are no longer run here (their inboxes and send-based calls are refused).
     */
    void fence(int failedRank, PeerFailedException failure) {
        String reason = "the job declared rank " + failedRank + " failed: " + failure.getMessage();
        node.fence(failedRank, reason);
        Link link = links.get(failedRank); // a volatile load: link() stores before it checks the verdict
        if (link != null) {
            link.fence(reason); // the messengers' link too: connect returns the transport's one per peer
            return;
        }
        // The messengers may hold the transport's link without this table: get it off the control plane's event loop,
        // where a connect to a dead peer could block for the connect timeout.
        Thread.ofPlatform().daemon().name("fabricrpc-fence-r" + failedRank).start(() -> {
            try {
                link(failedRank).fence(reason);
            } catch (RuntimeException unreachable) {
                // No link can be made to it: nothing can be sent there either.
            }
        });
    }
}
