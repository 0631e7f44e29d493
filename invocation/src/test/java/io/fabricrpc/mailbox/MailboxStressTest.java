package io.fabricrpc.mailbox;

import io.fabricrpc.transport.Transport;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * Many client and server threads over one channel: every call is answered exactly once, with its own answer.
 * The total is {@link #totalCalls()} (10^7 by default; the system property {@code fabricrpc.stress.calls}
 * scales it for a quick local run).
 */
public abstract class MailboxStressTest {
    private static final int CLIENTS = Integer.getInteger("fabricrpc.stress.clients", 4);
    private static final int SERVERS = Integer.getInteger("fabricrpc.stress.servers", 2);

    protected abstract TransportFixture fixture();

    static long totalCalls() {
        return Long.getLong("fabricrpc.stress.calls", 10_000_000L);
    }

    /** The server's answer: a function of the caller and its sequence number, so a misdelivery shows. */
    static long answer(long caller, long sequence) {
        return sequence * 0x9E3779B97F4A7C15L ^ caller;
    }

    @Test
    void everyCallIsAnsweredExactlyOnceWithItsOwnAnswer() throws Exception {
        try (Transport transport = fixture().open();
             MailboxChannels.Pair pair = MailboxChannels.loopback(transport, MailboxConfig.defaults())) {
            long perClient = totalCalls() / CLIENTS;
            long started = System.nanoTime();
            AtomicBoolean stop = new AtomicBoolean();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            long[] servedBy = new long[SERVERS];
            List<Thread> servers = new ArrayList<>();
            for (int s = 0; s < SERVERS; s++) {
                int id = s;
                servers.add(Thread.ofPlatform().name("stress-server-" + s).start(() -> {
                    Port.RequestHandler handler = (request, length, reply) -> {
                        long caller = request.get(ValueLayout.JAVA_LONG, 0);
                        long sequence = request.get(ValueLayout.JAVA_LONG, 8);
                        reply.set(ValueLayout.JAVA_LONG, 0, sequence);
                        reply.set(ValueLayout.JAVA_LONG, 8, answer(caller, sequence));
                        return 16;
                    };
                    try {
                        while (!stop.get()) {
                            if (pair.server().serveOne(handler)) {
                                servedBy[id]++;
                            } else {
                                Thread.onSpinWait();
                            }
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                }));
            }
            List<Thread> clients = new ArrayList<>();
            for (int c = 0; c < CLIENTS; c++) {
                long caller = c + 1;
                clients.add(Thread.ofPlatform().name("stress-client-" + c).start(() -> {
                    long[] reply = new long[2];
                    MemorySegment request = MemorySegment.ofArray(new long[2]);
                    try {
                        for (long sequence = 0; sequence < perClient && failure.get() == null; sequence++) {
                            request.set(ValueLayout.JAVA_LONG, 0, caller);
                            request.set(ValueLayout.JAVA_LONG, 8, sequence);
                            try (Port port = pair.client().open()) {
                                port.send(request, 0, 16);
                                port.recv((m, n) -> {
                                    reply[0] = m.get(ValueLayout.JAVA_LONG, 0);
                                    reply[1] = m.get(ValueLayout.JAVA_LONG, 8);
                                });
                            }
                            if (reply[0] != sequence || reply[1] != answer(caller, sequence)) {
                                throw new AssertionError("caller " + caller + " call " + sequence + " got the reply of call "
                                        + reply[0] + " (" + reply[1] + ")");
                            }
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                }));
            }
            for (Thread client : clients) {
                client.join();
            }
            stop.set(true);
            for (Thread server : servers) {
                server.join();
            }
            assertNull(failure.get(), () -> "failure: " + failure.get());
            long served = 0;
            for (long n : servedBy) {
                served += n;
            }
            assertEquals(perClient * CLIENTS, served, "calls served vs. calls made");
            System.out.printf("stress: %d calls by %d client and %d server threads in %d ms%n", served, CLIENTS,
                    SERVERS, (System.nanoTime() - started) / 1_000_000);
        }
    }
}
