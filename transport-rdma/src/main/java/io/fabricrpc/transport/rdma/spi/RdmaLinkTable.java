package io.fabricrpc.transport.rdma.spi;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The links of one {@link RdmaTransport}: every live link (made or accepted, in one array that pollers and the
 * heartbeat read as a snapshot), the canonical link per peer endpoint id, and the links discarded before the
 * transport closes, whose memory goes with the transport's. Invariant: the array and the retired list change only
 * under {@code lock}, which is never held while waiting (DiSNI's connection-manager thread takes it).
 */
final class RdmaLinkTable {
    private final ConcurrentHashMap<Long, RdmaLink> canonical = new ConcurrentHashMap<>();
    private final Object lock = new Object();
    private volatile RdmaLink[] all = new RdmaLink[0];
    private final List<RdmaLink> retired = new ArrayList<>(); // guarded by lock

    /** Every live link: a consistent snapshot (volatile read). */
    RdmaLink[] all() {
        return all;
    }

    /** The canonical link to {@code peerId}, or null. */
    RdmaLink get(long peerId) {
        return canonical.get(peerId);
    }

    /** Makes {@code link} the canonical link to {@code peerId} unless one is; returns the one there before, or null. */
    RdmaLink putIfAbsent(long peerId, RdmaLink link) {
        return canonical.putIfAbsent(peerId, link);
    }

    /** A new link: polled and probed from now on. */
    void track(RdmaLink link) {
        synchronized (lock) {
            RdmaLink[] grown = Arrays.copyOf(all, all.length + 1);
            grown[grown.length - 1] = link;
            all = grown; // volatile: pollMessages iterates a consistent snapshot
        }
    }

    /** Closes {@code link} for {@code reason} and stops polling it; its memory is released with the transport's. */
    void discard(RdmaLink link, String reason) {
        link.close(reason);
        synchronized (lock) {
            all = Arrays.stream(all).filter(l -> l != link).toArray(RdmaLink[]::new);
            retired.add(link);
        }
    }

    /** On close: no link is canonical any more. */
    void clearCanonical() {
        canonical.clear();
    }

    /** Once no QP, CM id or CM thread is left: frees the memory of every link, live or discarded. */
    void releaseMemory() {
        synchronized (lock) {
            for (RdmaLink link : all) {
                link.releaseMemory();
            }
            retired.forEach(RdmaLink::releaseMemory);
            retired.clear();
        }
    }
}
