package io.fabricrpc.demo;

import io.fabricrpc.mailbox.MailboxChannels;
import io.fabricrpc.mailbox.MailboxClient;
import io.fabricrpc.mailbox.MailboxConfig;
import io.fabricrpc.mailbox.MailboxServer;
import io.fabricrpc.mailbox.Port;
import io.fabricrpc.transport.EndpointAddress;
import io.fabricrpc.transport.Transport;
import io.fabricrpc.transport.Transports;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Two processes exchanging requests through the mailbox: this process starts a server process on the configured
 * transport ({@code -Dfabric.transport=shm} by default), its client threads call it for a few seconds, and every
 * answer is checked. Prints calls/s each second and a verified total.
 *
 * <p>Usage: {@code MailboxDemo [seconds] [client threads]}.
 */
public final class MailboxDemo {
    private static final long STOP = -1;

    private MailboxDemo() {
    }

    /** The server's work: a function of the request that the client can check. */
    static long answer(long caller, long value) {
        return value * value + caller;
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("--serve")) {
            serve();
            return;
        }
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        int threads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        System.exit(run(seconds, threads) ? 0 : 1);
    }

    private static Map<String, String> config() {
        Map<String, String> config = new HashMap<>();
        System.getProperties().forEach((k, v) -> {
            String key = k.toString();
            if (key.startsWith("fabric.") || key.startsWith("shm.") || key.startsWith("rdma.")) {
                config.put(key, v.toString());
            }
        });
        return config;
    }

    private static boolean run(int seconds, int threads) throws Exception {
        Map<String, String> config = config();
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .filter(a -> a.startsWith("--") || a.startsWith("-D")).toList());
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), MailboxDemo.class.getName(), "--serve"));
        Process server = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (Transport transport = Transports.open(config)) {
            BufferedReader serverOut = new BufferedReader(new InputStreamReader(server.getInputStream()));
            String line = serverOut.readLine();
            if (line == null || !line.startsWith("ADDRESS ")) {
                System.err.println("server process did not start: " + line);
                return false;
            }
            String[] parts = line.split(" ");
            EndpointAddress address = new EndpointAddress(parts[1], HexFormat.of().parseHex(parts[2]));
            MailboxClient client = MailboxChannels.connect(transport, address, MailboxConfig.defaults(),
                    Duration.ofSeconds(30));
            System.out.printf("mailbox demo: %s transport, server pid %d, %d client threads, %d ports, %d s%n",
                    transport.kind(), server.pid(), threads, client.portCount(), seconds);

            LongAdder calls = new LongAdder();
            AtomicLong mismatches = new AtomicLong();
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> callers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                long caller = t + 1;
                callers.add(Thread.ofPlatform().name("caller-" + caller).start(() -> {
                    MemorySegment request = MemorySegment.ofArray(new long[2]);
                    long[] reply = new long[1];
                    for (long value = 0; !stop.get(); value++) {
                        request.set(ValueLayout.JAVA_LONG, 0, caller);
                        request.set(ValueLayout.JAVA_LONG, 8, value);
                        try (Port port = client.open()) {
                            port.send(request, 0, 16);
                            port.recv((m, n) -> reply[0] = m.get(ValueLayout.JAVA_LONG, 0));
                        }
                        if (reply[0] != answer(caller, value)) {
                            mismatches.incrementAndGet();
                        }
                        calls.increment();
                    }
                }));
            }
            long last = 0;
            long started = System.nanoTime();
            for (int s = 1; s <= seconds; s++) {
                Thread.sleep(1000);
                long now = calls.sum();
                System.out.printf("  t=%ds  %,12d calls/s%n", s, now - last);
                last = now;
            }
            stop.set(true);
            for (Thread caller : callers) {
                caller.join();
            }
            double elapsed = (System.nanoTime() - started) / 1e9;
            try (Port port = client.open()) {
                MemorySegment request = MemorySegment.ofArray(new long[] {STOP, 0});
                port.send(request, 0, 16);
                port.recv((m, n) -> { });
            }
            boolean exited = server.waitFor(10, TimeUnit.SECONDS);
            long total = calls.sum();
            boolean ok = mismatches.get() == 0 && exited && server.exitValue() == 0 && total > 0;
            System.out.printf("total %,d calls in %.1f s (%,.0f calls/s); answers verified: %,d correct, %d wrong;"
                    + " server exit %s -> %s%n", total, elapsed, total / elapsed, total - mismatches.get(),
                    mismatches.get(), exited ? server.exitValue() : "timeout", ok ? "OK" : "FAILED");
            client.close();
            return ok;
        } finally {
            server.destroyForcibly();
        }
    }

    private static void serve() throws Exception {
        try (Transport transport = Transports.open(config())) {
            System.out.println("ADDRESS " + transport.address().kind() + " "
                    + HexFormat.of().formatHex(transport.address().bytes()));
            System.out.flush();
            MailboxServer server = MailboxChannels.accept(transport, MailboxConfig.defaults(), Duration.ofSeconds(30));
            boolean[] stop = {false};
            Port.RequestHandler handler = (request, length, reply) -> {
                long caller = request.get(ValueLayout.JAVA_LONG, 0);
                long value = request.get(ValueLayout.JAVA_LONG, 8);
                stop[0] |= caller == STOP;
                reply.set(ValueLayout.JAVA_LONG, 0, answer(caller, value));
                return 8;
            };
            while (!stop[0]) {
                if (!server.serveOne(handler)) {
                    server.link().checkAlive(); // ends the server when the client process dies
                    Thread.onSpinWait();
                }
            }
            server.close();
        }
    }
}
