package io.fabricrpc.mailbox;

import io.fabricrpc.transport.EndpointAddress;
import io.fabricrpc.api.PeerFailedException;
import io.fabricrpc.transport.Transport;
import io.fabricrpc.transport.TransportFixture;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** The mailbox between two JVMs; every transport module runs it with its own fixture. */
public abstract class MailboxCrossProcessTest {
    protected abstract TransportFixture fixture();

    /** A child JVM running {@link MailboxServerProcess}, with its stdout lines queued. */
    protected final class ServerProcess implements AutoCloseable {
        final Process process;
        final BlockingQueue<String> lines = new ArrayBlockingQueue<>(1000);

        ServerProcess(int threads) throws IOException {
            List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            command.addAll(io.fabricrpc.fabric.LocalLauncher.inheritedJvmFlags()); // Agrona and DiSNI need theirs
            command.add("-Xmx256m");
            fixture().config().forEach((k, v) -> command.add("-D" + k + "=" + v));
            command.addAll(fixture().childJvmOptions());
            command.add("-cp");
            command.add(System.getProperty("java.class.path"));
            command.add(MailboxServerProcess.class.getName());
            command.add(Integer.toString(threads));
            process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
            Thread.ofPlatform().daemon().start(() -> {
                try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream()))) {
                    for (String line; (line = reader.readLine()) != null; ) {
                        lines.offer(line);
                    }
                } catch (IOException ignored) {
                    // the process ended
                }
            });
        }

        String expectLine(String prefix) throws InterruptedException {
            String line = lines.poll(60, TimeUnit.SECONDS);
            assertNotNull(line, "child printed nothing within 60 s (expected " + prefix + ")");
            assertTrue(line.startsWith(prefix), "expected " + prefix + ", got: " + line);
            return line;
        }

        EndpointAddress address() throws InterruptedException {
            String[] parts = expectLine("ADDRESS ").split(" ");
            return new EndpointAddress(parts[1], HexFormat.of().parseHex(parts[2]));
        }

        @Override
        public void close() throws InterruptedException {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static long call(MailboxClient client, MemorySegment request, long caller, long sequence) {
        request.set(ValueLayout.JAVA_LONG, 0, caller);
        request.set(ValueLayout.JAVA_LONG, 8, sequence);
        long[] reply = new long[2];
        try (Port port = client.open()) {
            port.send(request, 0, 16);
            port.recv((m, n) -> {
                reply[0] = m.get(ValueLayout.JAVA_LONG, 0);
                reply[1] = m.get(ValueLayout.JAVA_LONG, 8);
            });
        }
        if (reply[0] != sequence || reply[1] != MailboxStressTest.answer(caller, sequence)) {
            fail("caller " + caller + " call " + sequence + " got " + reply[0] + "/" + reply[1]);
        }
        return reply[1];
    }

    @Test
    void callsBetweenTwoProcessesAreAnsweredExactlyOnce() throws Exception {
        try (ServerProcess child = new ServerProcess(2); Transport transport = fixture().open()) {
            MailboxClient client = MailboxChannels.connect(transport, child.address(), MailboxConfig.defaults(),
                    Duration.ofSeconds(60));
            int threads = 2;
            long perThread = Long.getLong("fabricrpc.crossprocess.calls", 200_000L);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> callers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                long caller = t + 1;
                callers.add(Thread.ofPlatform().start(() -> {
                    MemorySegment request = MemorySegment.ofArray(new long[2]);
                    try {
                        for (long i = 0; i < perThread; i++) {
                            call(client, request, caller, i);
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }));
            }
            for (Thread caller : callers) {
                caller.join();
            }
            assertNull(failure.get(), () -> "failure: " + failure.get());
            call(client, MemorySegment.ofArray(new long[2]), MailboxServerProcess.STOP, 0);
            assertTrue(child.process.waitFor(30, TimeUnit.SECONDS), "server did not stop");
            assertEquals(0, child.process.exitValue());
            client.close();
        }
    }

    /**
     * Whether this transport's {@link PeerFailedException} names the peer's pid (shared memory watches the process;
     * RDMA knows only the peer's endpoint id, which every transport's message carries).
     */
    protected boolean failuresNameThePeerPid() {
        return true;
    }

    @Test
    void killingTheServerMidCallEndsTheWaitWellUnderASecond() throws Exception {
        try (ServerProcess child = new ServerProcess(1)) {
            Set<Thread> before = Thread.getAllStackTraces().keySet();
            killServerMidCall(child);
            assertNoThreadOutlives(before);
        }
    }

    private void killServerMidCall(ServerProcess child) throws Exception {
        try (Transport transport = fixture().open()) {
            MailboxClient client = MailboxChannels.connect(transport, child.address(), MailboxConfig.defaults(),
                    Duration.ofSeconds(60));
            call(client, MemorySegment.ofArray(new long[2]), 5, 1); // the channel works
            MemorySegment request = MemorySegment.ofArray(new long[] {MailboxServerProcess.HANG, 0});
            Port port = client.open();
            port.send(request, 0, 16);
            child.expectLine("HANGING");
            long[] killedAt = new long[1];
            Thread killer = Thread.ofPlatform().start(() -> {
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    return;
                }
                killedAt[0] = System.nanoTime();
                child.process.destroyForcibly();
            });
            PeerFailedException e = assertThrows(PeerFailedException.class, () -> port.recv((m, n) -> { }));
            long detectedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt[0]);
            killer.join();
            assertTrue(e.getMessage().contains(Long.toHexString(client.link().peerId())), e.getMessage());
            if (failuresNameThePeerPid()) {
                assertTrue(e.getMessage().contains(Long.toString(child.process.pid())), e.getMessage());
            }
            assertTrue(detectedMillis < 1000, "the client noticed the dead server after " + detectedMillis + " ms");
            System.out.println("dead server detected " + detectedMillis + " ms after kill: " + e.getMessage());
            port.close();
            assertThrows(PeerFailedException.class, client::open, "new calls fail fast too");
            assertFalse(client.link().isAlive(), "the link reports the failure");
            assertThrows(PeerFailedException.class, () -> client.link().checkAlive());
            client.close();
        } // the endpoint closes without an error although its peer is gone
    }

    /** Every thread started since {@code before} (the endpoint's own) ends within 5 s of its close. */
    private void assertNoThreadOutlives(Set<Thread> before) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        List<Thread> left;
        do {
            left = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.isAlive() && !before.contains(t) && !fixture().isProcessWideThread(t.getName()))
                    .toList();
            if (left.isEmpty()) {
                return;
            }
            Thread.sleep(20);
        } while (System.nanoTime() < deadline);
        fail("threads still running 5 s after the endpoint closed: " + left.stream().map(Thread::getName).toList());
    }
}
