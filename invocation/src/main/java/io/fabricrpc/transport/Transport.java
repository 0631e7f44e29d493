package io.fabricrpc.transport;

import io.fabricrpc.api.TransportException;

import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;

/**
 * One endpoint of a transport in this process. Obtained from {@link Transports#open}; a process may hold
 * several (tests run "two processes" as two endpoints in one JVM). Thread-safe.
 */
public interface Transport extends AutoCloseable {
    /** The transport's name in configuration, e.g. {@code "shm"} or {@code "rdma"}. */
    String kind();

    /** This endpoint's id, unique among live endpoints of the job. */
    long endpointId();

    /** What peers pass to {@link #connect} to reach this endpoint. */
    EndpointAddress address();

    /**
     * Allocates {@code bytes} of memory (zeroed) that peers may access as {@code access} allows.
     *
     * @throws TransportException if the memory cannot be allocated or registered, saying why and what to change
     */
    LocalRegion allocate(long bytes, RemoteAccess access);

    /**
     * Connects to a peer endpoint (or returns the existing link to it). Connecting to this endpoint's own
     * address gives a loopback link.
     *
     * @throws PeerFailedException if the peer is absent or dead
     */
    Link connect(EndpointAddress peer);

    /** The largest payload {@link Link#send} accepts. */
    int maxMessageSize();

    /**
     * Delivers up to {@code limit} pending two-sided messages to {@code handler} on the calling thread.
     * Call it from one thread at a time (a service thread, or the thread waiting for setup).
     *
     * @return the number of messages delivered
     */
    int pollMessages(MessageHandler handler, int limit);

    /**
     * A thread of this process caught {@code fault} touching memory of this endpoint (HotSpot turns a SIGBUS in a
     * mapping whose file was cut short into {@link InternalError}). The transport finds the cause and fails what it
     * carries: a link, or every link when this endpoint's own memory is gone. True if it found the cause.
     */
    default boolean memoryFault(Throwable fault) {
        return false;
    }

    /**
     * Sets what is told, once, when this endpoint itself becomes unusable (its own memory faulted): the process can
     * no longer take part in the job and must leave it as failed. Set before the endpoint is shared.
     */
    default void onEndpointFault(java.util.function.Consumer<String> listener) {
    }

    /** Closes every link and region of this endpoint; peers observe the close as a failure of this peer. */
    @Override
    void close();
}
