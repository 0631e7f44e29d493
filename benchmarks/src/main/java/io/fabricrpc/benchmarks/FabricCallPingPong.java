package io.fabricrpc.benchmarks;

import io.fabricrpc.api.Fabric;
import io.fabricrpc.api.FabricConfig;
import io.fabricrpc.api.JobConfig;
import io.fabricrpc.api.ThreadId;
import io.fabricrpc.api.SerializationRegistry;

import java.time.Duration;

/**
 * {@code Fabric.callReturn} as a ping-pong contender: rank 0 (the client, this JVM) calls worker (1, 0), whose echo
 * thread runs {@code processCalls}. Both ranks build the same registry; the job is formed over the shared-memory
 * transport unless {@code fabric.transport} says otherwise.
 */
final class FabricCallPingPong {
    static final ThreadId ECHO = new ThreadId(1, 0);

    private FabricCallPingPong() {
    }

    static SerializationRegistry registry() {
        return SerializationRegistry.builder().allowCapturingClass(FabricCallPingPong.class)
                .allowCapturingClass(Client.class).build(); // the lambda is written in Client
    }

    static Fabric join(int rank, int port, String secret) {
        JobConfig job = JobConfig.builder().rank(rank).size(2).threadsPerProcess(1).coordinator("127.0.0.1", port)
                .jobSecret(secret).joinTimeout(Duration.ofSeconds(60)).build();
        return Fabric.join(FabricConfig.of(job, registry()));
    }

    /** One call: the sequence goes out as the captured value, the echo returns it plus one. */
    static final class Client implements PingPongClient {
        private final Fabric fabric;

        Client(Fabric fabric) {
            this.fabric = fabric;
        }

        @Override
        public void call(long sequence) {
            long answer = fabric.callReturn(ECHO, () -> sequence + 1);
            if (answer != sequence + 1) {
                throw new IllegalStateException("callReturn answered " + answer + " to call " + sequence);
            }
        }

        @Override
        public void close() {
            fabric.close();
        }
    }

    /** The echo worker: attaches on its first poll (on the echo thread), then runs the calls addressed to it. */
    static final class Echo implements EchoService {
        private final Fabric fabric;
        private boolean attached;

        Echo(Fabric fabric) {
            this.fabric = fabric;
        }

        @Override
        public int poll() {
            if (!attached) {
                fabric.attach(ECHO.threadIndex());
                attached = true;
            }
            return fabric.processCalls();
        }
    }
}
