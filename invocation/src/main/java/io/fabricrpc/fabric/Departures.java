package io.fabricrpc.fabric;

import io.fabricrpc.api.PeerFailedException;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.BooleanSupplier;

/**
 * What one process knows of the job's ranks: per rank, null while alive, else why it is gone; the job's shutdown;
 * the coordinator's refused joins; and the listeners told of each. Invariant: a rank's entry is written once, by
 * whoever holds {@code lock} (the event loop, a fail-stop, a close), and events are delivered under the same lock,
 * so a listener sees each event exactly once, a late listener first gets the replay. Queries are one volatile read.
 */
final class Departures {
    private static final Log LOG = Log.of(ControlPlane.class);
    private static final int MAX_KEPT_REFUSALS = 256;
    private static final long REFUSAL_LOG_PERIOD_NANOS = 10_000_000_000L;

    private final int rank;
    private final int size;
    private final ControlCounters counters;
    /** Per rank: null while alive, else why it is gone; written under {@code lock}, read with volatile semantics. */
    private final AtomicReferenceArray<PeerFailedException> gone;
    private final List<ControlPlaneListener> listeners = new CopyOnWriteArrayList<>();
    /** Serialises event delivery with listener registration so each listener sees each event exactly once. */
    private final Object lock = new Object();
    private final List<JoinRefusal> refusals = new CopyOnWriteArrayList<>();
    private volatile boolean jobShutdown;
    // Event loop only: the refusal log's rate limit.
    private long refusalLogged;
    private long refusalsLogged;
    private long refusalsUnlogged;

    Departures(int rank, int size, ControlCounters counters) {
        this.rank = rank;
        this.size = size;
        this.counters = counters;
        this.gone = new AtomicReferenceArray<>(size);
    }

    /**
     * Loads, on the caller's thread, what the first departure's report loads (the logging backend, JFR's event
     * machinery): seconds under emulation, which on the event loop would delay heartbeats and the verdict itself
     * long enough for members to declare the coordinator failed.
     */
    static void warmUp() {
        LOG.warmUp();
        PeerDepartureEvent event = new PeerDepartureEvent();
        if (event.shouldCommit()) {
            event.rank = -1; // never committed: a recording that is on would show it, so leave it
        }
    }

    PeerFailedException get(int peer) {
        return gone.get(peer); // volatile read
    }

    boolean isJobShutdown() {
        return jobShutdown;
    }

    List<JoinRefusal> refusals() {
        return List.copyOf(refusals);
    }

    /** Records that {@code peer} is gone and tells the listeners; false if it was already gone. */
    boolean depart(int peer, String reason, boolean orderly, Throwable cause) {
        PeerFailedException d = new PeerFailedException(peer, reason, orderly, cause);
        synchronized (lock) {
            if (gone.get(peer) != null) {
                return false;
            }
            if (orderly) {
                LOG.debug("rank {}: {}", rank, d.getMessage());
            } else {
                counters.peerFailures++; // under lock
                LOG.warn("rank {}: {}", rank, d.getMessage());
            }
            PeerDepartureEvent event = new PeerDepartureEvent();
            if (event.shouldCommit()) {
                event.rank = rank;
                event.peer = peer;
                event.orderly = orderly;
                event.reason = reason;
                event.commit();
            }
            gone.set(peer, d); // after the event: whoever sees the failure finds it recorded
            for (ControlPlaneListener l : listeners) {
                deliver(l, peer, d);
            }
        }
        return true;
    }

    /** Every rank not yet gone counts as gone in an orderly way, for {@code reason}; no listener is told. */
    void closeAll(String reason) {
        synchronized (lock) {
            for (int r = 0; r < size; r++) {
                gone.compareAndSet(r, null, new PeerFailedException(r, reason, true));
            }
        }
    }

    /** The barrier was released: every rank ends normally (no per-rank events). */
    void jobShutdown() {
        synchronized (lock) {
            for (int r = 0; r < size; r++) {
                gone.compareAndSet(r, null, new PeerFailedException(r, "the job shut down", true));
            }
            jobShutdown = true;
            for (ControlPlaneListener l : listeners) {
                safely(l::jobShutdown);
            }
        }
    }

    /** On the event loop: keeps and reports a refused join, logging at most one line per period. */
    void refused(JoinRefusal refusal) {
        long now = System.nanoTime();
        if (now - refusalLogged >= REFUSAL_LOG_PERIOD_NANOS || refusalsLogged == 0) {
            // One line per period: a flood of bad joins must not fill the disk (hostile input).
            LOG.warn("coordinator refused join from {} claiming rank {}: {} ({}){}", refusal.remoteAddress(),
                refusal.claimedRank(), refusal.message(), refusal.reason(), refusalsUnlogged == 0 ? ""
                    : "; " + refusalsUnlogged + " more refusals since the last line were not logged");
            refusalLogged = now;
            refusalsLogged++;
            refusalsUnlogged = 0;
        } else {
            refusalsUnlogged++;
        }
        synchronized (lock) {
            if (refusals.size() >= MAX_KEPT_REFUSALS) {
                refusals.remove(0); // bounded: a flood of bad joins must not grow memory
            }
            refusals.add(refusal);
            for (ControlPlaneListener l : listeners) {
                safely(() -> l.joinRefused(refusal));
            }
        }
    }

    /** Adds a listener; departures (and a shutdown) that already happened are replayed to it first. */
    void addListener(ControlPlaneListener listener, BooleanSupplier closed) {
        synchronized (lock) {
            listeners.add(listener);
            for (int r = 0; r < size; r++) {
                PeerFailedException d = gone.get(r);
                if (d != null && !closed.getAsBoolean()) {
                    deliver(listener, r, d);
                }
            }
            if (jobShutdown) {
                safely(listener::jobShutdown);
            }
        }
    }

    void removeListener(ControlPlaneListener listener) {
        listeners.remove(listener);
    }

    private static void deliver(ControlPlaneListener l, int peer, PeerFailedException d) {
        if (d.isOrderlyDeparture()) {
            safely(() -> l.peerLeft(peer));
        } else {
            safely(() -> l.peerFailed(peer, d));
        }
    }

    private static void safely(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            LOG.error("control plane listener threw", e);
        }
    }
}
