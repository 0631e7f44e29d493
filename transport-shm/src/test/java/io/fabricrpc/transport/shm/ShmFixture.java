package io.fabricrpc.transport.shm;

import io.fabricrpc.transport.TransportFixture;

import java.util.Map;

/** Runs the shared suites over shared memory in the default directory. */
final class ShmFixture implements TransportFixture {
    static final ShmFixture INSTANCE = new ShmFixture(true);
    /** No peer memory mapped for direct stores: the protocols take the staged path (and deferred flags) of RDMA. */
    static final ShmFixture WINDOWLESS = new ShmFixture(false);

    private final boolean directWindows;

    private ShmFixture(boolean directWindows) {
        this.directWindows = directWindows;
    }

    @Override
    public Map<String, String> config() {
        return Map.of("fabric.transport", "shm", "shm.directWindows", String.valueOf(directWindows));
    }
}
