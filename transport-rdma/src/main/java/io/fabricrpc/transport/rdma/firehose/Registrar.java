package io.fabricrpc.transport.rdma.firehose;

/**
 * What a {@link FirehoseCache} needs from the device: register and deregister one bucket of memory. The RDMA
 * implementation is {@link RdmaFirehose#registrar}; tests of the concurrency logic may count calls through a
 * decorator. Implementations are thread-safe; the cache calls them without holding any lock.
 *
 * @param <R> the registration (for RDMA a {@link io.fabricrpc.api.LocalRegion} with lkey, rkey and address)
 */
public interface Registrar<R> {
    /**
     * Registers {@code [address, address + length)}.
     *
     * @throws RuntimeException if the device refuses; the cache passes it on to the pinner, wrapped with the bucket
     */
    R register(long address, long length);

    /** Deregisters what {@link #register} returned. */
    void deregister(R registration);
}
