package io.fabricrpc.benchmarks;

import io.fabricrpc.mailbox.MailboxClient;
import io.fabricrpc.mailbox.MailboxServer;
import io.fabricrpc.mailbox.Port;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** The system under test: one synchronous call per round trip over a mailbox channel. */
final class MailboxPingPong {
    private MailboxPingPong() {
    }

    /** Client side: open a port, send, receive the echo into a local buffer, close (the full call path). */
    static final class Client implements PingPongClient {
        private final MailboxClient client;
        private final Arena arena = Arena.ofShared();
        private final MemorySegment ping;
        private final MemorySegment pong;
        private final int payload;

        Client(MailboxClient client, int payload) {
            this.client = client;
            this.payload = payload;
            this.ping = arena.allocate(Math.max(payload, 8), 64);
            this.pong = arena.allocate(Math.max(payload, 8), 64);
        }

        @Override
        public void call(long sequence) {
            if (payload >= 8) {
                ping.set(ValueLayout.JAVA_LONG, 0, sequence);
            }
            long length;
            try (Port port = client.open()) {
                port.send(ping, 0, payload);
                length = port.recv(pong, 0);
            }
            Echoes.check("mailbox", sequence, payload, length, payload >= 8 ? pong.get(ValueLayout.JAVA_LONG, 0) : sequence);
        }

        @Override
        public void close() {
            arena.close();
        }
    }

    /** Server side: {@link MailboxServer#serveOne} with a handler that copies the request into the reply in place. */
    static final class Echo implements EchoService {
        private static final Port.RequestHandler ECHO = (request, length, reply) -> {
            MemorySegment.copy(request, 0, reply, 0, length);
            return length;
        };
        private final MailboxServer server;
        private int misses;

        Echo(MailboxServer server) {
            this.server = server;
        }

        @Override
        public int poll() {
            if (server.serveOne(ECHO)) {
                return 1;
            }
            if ((++misses & 1023) == 0) {
                server.link().checkAlive(); // a client process that died ends the echo loop
            }
            return 0;
        }
    }
}
