package io.fabricrpc.transport.shm;

import io.fabricrpc.transport.TransportFixture;

import java.util.Map;

/** Runs the shared suites over shared memory in the default directory. */
final class ShmFixture implements TransportFixture {
    static final ShmFixture INSTANCE = new ShmFixture();

    @Override
    public Map<String, String> config() {
        return Map.of("fabric.transport", "shm");
    }
}
