package io.fabricrpc.transport.shm;

import io.fabricrpc.messaging.MessengerTest;
import io.fabricrpc.transport.Transport;
import io.fabricrpc.transport.TransportFixture;
import io.fabricrpc.transport.ScramblingTransport;

import java.util.Map;

/** The messenger suite over links whose writes land late, byte by byte in random order: the worst the SPI allows. */
class ShmScramblingMessengerTest extends MessengerTest {
    private static final TransportFixture SCRAMBLING = new TransportFixture() {
        @Override
        public Map<String, String> config() {
            return ShmFixture.INSTANCE.config();
        }

        @Override
        public Transport open() {
            return new ScramblingTransport(ShmFixture.INSTANCE.open());
        }
    };

    @Override
    protected TransportFixture fixture() {
        return SCRAMBLING;
    }

    @Override
    protected int slowdown() {
        return 4;
    }
}
