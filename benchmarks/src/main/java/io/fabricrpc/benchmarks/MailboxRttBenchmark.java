package io.fabricrpc.benchmarks;

import io.fabricrpc.mailbox.MailboxChannels;
import io.fabricrpc.mailbox.MailboxClient;
import io.fabricrpc.mailbox.MailboxConfig;
import io.fabricrpc.transport.Transport;
import io.fabricrpc.transport.Transports;
import org.HdrHistogram.Histogram;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * Mailbox round-trip latency and throughput against Agrona {@code OneToOneRingBuffer} ping-pong, between two
 * threads and between two processes, interleaved round by round (A B, B A, ...) so that the noise of a shared
 * machine falls on both alike; reports the medians of the per-round ratios and the bytes allocated per call.
 * Writes a Markdown report (see {@link Report}) and prints its summary.
 */
@Command(name = "mailbox-rtt", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Mailbox round trip vs Agrona OneToOneRingBuffer ping-pong (intra-JVM and cross-process).")
public final class MailboxRttBenchmark implements Callable<Integer> {
    /** The placements a run measures. */
    public enum Mode { INTRA, CROSS, BOTH }

    static final int PORTS = 64;
    static final long REPLY_TIMEOUT_SECONDS = 10;
    private static final long MAX_RECORDED_NANOS = TimeUnit.SECONDS.toNanos(REPLY_TIMEOUT_SECONDS * 2);
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    @Option(names = "--rounds", defaultValue = "7", description = "Measured rounds per placement (default ${DEFAULT-VALUE}).")
    int rounds;
    @Option(names = "--seconds", defaultValue = "2", description = "Seconds per contender per round (default ${DEFAULT-VALUE}).")
    double seconds;
    @Option(names = "--warmup", defaultValue = "3", description = "Warm-up seconds per contender per placement (default ${DEFAULT-VALUE}).")
    double warmup;
    @Option(names = "--payload", defaultValue = "16", description = "Payload bytes per call, each way (default ${DEFAULT-VALUE}).")
    int payload;
    @Option(names = "--mode", defaultValue = "both", description = "intra (two threads), cross (two processes) or both (default ${DEFAULT-VALUE}).")
    Mode mode;
    @Option(names = "--idle", defaultValue = "backoff,yield", split = ",", description = "Idle strategies of every waiting thread, both systems, one full run each: backoff (the mailbox default), yield, busy (default ${DEFAULT-VALUE}).")
    List<Idle> idles;
    @Option(names = "--pin", defaultValue = "auto", description = "CLIENT_CPU,ECHO_CPU to pin the calling and the echoing thread (both systems), none, or auto (0,1 with two CPUs or more; default ${DEFAULT-VALUE}).")
    String pin;
    @Option(names = "--packet-size", defaultValue = "256", description = "Mailbox packet size (default ${DEFAULT-VALUE}).")
    int packetSize;
    @Option(names = "--shm-dir", defaultValue = "/dev/shm", description = "Base directory of the shared-memory files (default ${DEFAULT-VALUE}).")
    Path shmDir;
    @Option(names = "--output", defaultValue = "benchmarks/results/mailbox-rtt.md", description = "Markdown report, overwritten (default ${DEFAULT-VALUE}).")
    Path output;
    @Option(names = "--mailbox-client", defaultValue = "raw", description = "What the cross-process 'mailbox' contender calls: raw (a MailboxClient port) or callreturn (Fabric.callReturn of a two-process job over the mailbox; default ${DEFAULT-VALUE}).")
    String mailboxClient;
    @Option(names = "--note", description = "A remark to put in the report (e.g. what else loaded the machine).")
    String note;

    private Report report;
    private Idle idle;
    private int clientCpu = -1;
    private int echoCpu = -1;

    public static void main(String[] args) {
        System.exit(commandLine(new MailboxRttBenchmark()).execute(args));
    }

    static CommandLine commandLine(MailboxRttBenchmark benchmark) {
        return new CommandLine(benchmark).setCaseInsensitiveEnumValuesAllowed(true);
    }

    /** The report of the last {@link #call()}, or null. */
    Report report() {
        return report;
    }

    @Override
    public Integer call() throws IOException {
        validate();
        Report.Machine machine = Report.Machine.describe();
        double loadBefore = Report.Machine.loadAverage();
        if (clientCpu >= 0) {
            CpuAffinity.pinCurrentThread(clientCpu); // this thread makes every measured call
        }
        List<PlacementResult> results = new ArrayList<>();
        for (Idle each : idles) {
            idle = each;
            if (mode != Mode.CROSS) {
                results.add(intraJvm());
            }
            if (mode != Mode.INTRA) {
                results.add(crossProcess());
            }
        }
        report = new Report(machine, loadBefore, Report.Machine.loadAverage(), parameters(), note, results);
        Path parent = output.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.writeString(output, report.markdown());
        System.out.println(report.summary());
        System.out.println("report written to " + output.toAbsolutePath());
        return 0;
    }

    private void validate() {
        List<String> problems = new ArrayList<>();
        if (rounds < 1 || rounds > 99) {
            problems.add("--rounds must be in [1, 99], got " + rounds);
        }
        if (!(seconds > 0 && seconds <= 30)) {
            problems.add("--seconds must be in (0, 30], got " + seconds);
        }
        if (!(warmup >= 0 && warmup <= 60)) {
            problems.add("--warmup must be in [0, 60], got " + warmup);
        }
        if (packetSize < 64 || packetSize % 64 != 0) {
            problems.add("--packet-size must be a multiple of 64, >= 64, got " + packetSize);
        } else if (payload < 0 || payload > packetSize - 16) {
            problems.add("--payload must be in [0, " + (packetSize - 16) + "] (one packet, the echo replies in place), got "
                    + payload);
        }
        if (idles.isEmpty()) {
            problems.add("--idle needs at least one strategy");
        }
        try {
            int[] cpus = CpuAffinity.parsePair("--pin", "CLIENT_CPU,ECHO_CPU", pin);
            if (cpus != null) {
                clientCpu = cpus[0];
                echoCpu = cpus[1];
            }
        } catch (IllegalArgumentException e) {
            problems.add(e.getMessage());
        }
        if (!problems.isEmpty()) {
            throw new CommandLine.ParameterException(new CommandLine(this), String.join("; ", problems));
        }
    }

    private String parameters() {
        return rounds + " rounds x " + seconds + " s per contender, warm-up " + warmup + " s per contender per placement,"
                + " payload " + payload + " B each way, mailbox " + PORTS + " ports of " + packetSize + " B,"
                + " Agrona rings of " + PingPongRingsDescriptor.DEFAULT_CAPACITY / 1024 + " KiB, idle strategies "
                + idles.stream().map(i -> i.name().toLowerCase()).toList() + " (one full run each; every waiting thread"
                + " of both systems uses it), " + (clientCpu < 0 ? "threads not pinned"
                : "calling thread pinned to CPU " + clientCpu + " and echo thread to CPU " + echoCpu)
                + ", order alternating per round";
    }

    static MailboxConfig mailboxConfig(int ports, int packetSize, Idle idle) {
        return MailboxConfig.defaults().withPorts(ports).withPacketSize(packetSize)
                .withReplyTimeout(Duration.ofSeconds(REPLY_TIMEOUT_SECONDS)).withIdleStrategy(idle::newStrategy);
    }

    private Map<String, String> transportConfig() {
        return Map.of("fabric.transport", "shm", "shm.dir", shmDir.toString());
    }

    private PlacementResult intraJvm() {
        int capacity = PingPongRingsDescriptor.DEFAULT_CAPACITY;
        try (Transport transport = Transports.open(transportConfig());
             MailboxChannels.Pair pair = MailboxChannels.loopback(transport, mailboxConfig(PORTS, packetSize, idle));
             Contender mailbox = new Contender("mailbox", new MailboxPingPong.Client(pair.client(), payload),
                     new EchoLoop("echo-mailbox", new MailboxPingPong.Echo(pair.server()), idle.newStrategy(), echoCpu))) {
            UnsafeBuffer region = new UnsafeBuffer(BufferUtil.allocateDirectAligned(
                    PingPongRingsDescriptor.regionLength(capacity), 64));
            try (Contender agrona = new Contender("agrona", new AgronaPingPong.Client(region, capacity, payload,
                    idle.newStrategy(), TimeUnit.SECONDS.toNanos(REPLY_TIMEOUT_SECONDS)),
                    new EchoLoop("echo-agrona", new AgronaPingPong.Echo(region, capacity), idle.newStrategy(), echoCpu))) {
                return interleave("intra-JVM (two threads)", mailbox, agrona);
            }
        }
    }

    private PlacementResult crossProcess() {
        if (mailboxClient.equals("callreturn")) {
            return crossProcessCallReturn();
        }
        if (!mailboxClient.equals("raw")) {
            throw new IllegalArgumentException("--mailbox-client must be raw or callreturn, got " + mailboxClient);
        }
        int capacity = PingPongRingsDescriptor.DEFAULT_CAPACITY;
        try (Transport transport = Transports.open(transportConfig());
             SharedRingFile rings = SharedRingFile.create(shmDir, PingPongRingsDescriptor.regionLength(capacity))) {
            ChildEcho mailboxChild = ChildEcho.mailbox(PORTS, packetSize, idle, echoCpu);
            MailboxClient client;
            try {
                client = MailboxChannels.connect(transport, mailboxChild.address(),
                        mailboxConfig(PORTS, packetSize, idle), Duration.ofSeconds(ChildEcho.ANSWER_TIMEOUT_SECONDS));
                mailboxChild.expect("READY");
            } catch (RuntimeException e) {
                mailboxChild.close();
                throw e;
            }
            try (Contender mailbox = new Contender("mailbox", new MailboxPingPong.Client(client, payload), mailboxChild);
                 Contender agrona = new Contender("agrona", new AgronaPingPong.Client(rings.buffer(), capacity, payload,
                         idle.newStrategy(), TimeUnit.SECONDS.toNanos(REPLY_TIMEOUT_SECONDS)),
                         ChildEcho.agrona(rings.path(), capacity, idle, echoCpu))) {
                return interleave("cross-process (two JVMs)", mailbox, agrona);
            } finally {
                client.close();
            }
        }
    }

    /** Fabric.callReturn between two JVMs (rank 0 here, rank 1's worker in the child) against Agrona's ping-pong. */
    private PlacementResult crossProcessCallReturn() {
        int capacity = PingPongRingsDescriptor.DEFAULT_CAPACITY;
        try (SharedRingFile rings = SharedRingFile.create(shmDir, PingPongRingsDescriptor.regionLength(capacity))) {
            int port;
            try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
                port = socket.getLocalPort();
            }
            String secret = java.util.HexFormat.of().formatHex(java.security.SecureRandom.getSeed(16));
            ChildEcho fabricChild = ChildEcho.fabric(port, secret, idle, echoCpu);
            io.fabricrpc.api.Fabric fabric;
            try {
                fabric = FabricCallPingPong.join(0, port, secret); // forms the job with the child
                fabricChild.expect("READY");
            } catch (RuntimeException e) {
                fabricChild.close();
                throw e;
            }
            try (Contender mailbox = new Contender("callReturn", new FabricCallPingPong.Client(fabric), fabricChild);
                 Contender agrona = new Contender("agrona", new AgronaPingPong.Client(rings.buffer(), capacity, payload,
                         idle.newStrategy(), TimeUnit.SECONDS.toNanos(REPLY_TIMEOUT_SECONDS)),
                         ChildEcho.agrona(rings.path(), capacity, idle, echoCpu))) {
                return interleave("cross-process callReturn (two JVMs)", mailbox, agrona);
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private PlacementResult interleave(String placement, Contender mailbox, Contender agrona) {
        long warmupNanos = (long) (warmup * 1e9 / 2);
        if (warmupNanos > 0) {
            // Alternate during warm-up too, so the compiled measuring loop has seen both clients.
            for (int i = 0; i < 2; i++) {
                agrona.measure(-1, warmupNanos);
                mailbox.measure(-1, warmupNanos);
            }
        }
        long roundNanos = (long) (seconds * 1e9);
        List<Measurement> mailboxRounds = new ArrayList<>();
        List<Measurement> agronaRounds = new ArrayList<>();
        List<Boolean> order = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            boolean mailboxFirst = round % 2 == 1;
            if (mailboxFirst) {
                mailboxRounds.add(mailbox.measure(round, roundNanos));
                agronaRounds.add(agrona.measure(round, roundNanos));
            } else {
                agronaRounds.add(agrona.measure(round, roundNanos));
                mailboxRounds.add(mailbox.measure(round, roundNanos));
            }
            order.add(mailboxFirst);
            Measurement m = mailboxRounds.getLast();
            Measurement a = agronaRounds.getLast();
            System.out.printf("%s, idle %s, round %d: mailbox p50 %d ns p99 %d ns %.0f calls/s | agrona p50 %d ns p99 %d ns %.0f"
                            + " calls/s%n", placement, idle.name().toLowerCase(), round, m.p50Nanos(), m.p99Nanos(), m.callsPerSecond(),
                    a.p50Nanos(), a.p99Nanos(), a.callsPerSecond());
        }
        return new PlacementResult(placement, idle, mailboxRounds, agronaRounds, order);
    }

    /** A client and its echo side; measured from the calling thread. */
    private static final class Contender implements AutoCloseable {
        private final String name;
        private final PingPongClient client;
        private final EchoControl echo;
        private final Histogram histogram = new Histogram(1, MAX_RECORDED_NANOS, 3);
        private long sequence;

        Contender(String name, PingPongClient client, EchoControl echo) {
            this.name = name;
            this.client = client;
            this.echo = echo;
        }

        Measurement measure(int round, long durationNanos) {
            echo.activate();
            try {
                histogram.reset();
                long echoBefore = echo.allocatedBytes();
                long clientBefore = THREADS.getCurrentThreadAllocatedBytes();
                long start = System.nanoTime();
                long calls = timedCalls(client, histogram, sequence, start + durationNanos);
                long elapsed = System.nanoTime() - start;
                long clientBytes = THREADS.getCurrentThreadAllocatedBytes() - clientBefore;
                long echoBytes = echo.allocatedBytes() - echoBefore;
                sequence += calls;
                return new Measurement(round, histogram.getValueAtPercentile(50), histogram.getValueAtPercentile(99),
                        histogram.getMaxValue(), calls, elapsed, clientBytes, echoBytes);
            } catch (RuntimeException e) {
                throw new IllegalStateException(name + " failed in round " + round + ": " + e.getMessage(), e);
            } finally {
                echo.pause();
            }
        }

        /** The measured loop: one synchronous call after another until the deadline; returns the call count. */
        private static long timedCalls(PingPongClient client, Histogram histogram, long firstSequence, long deadline) {
            long calls = 0;
            long now;
            do {
                long before = System.nanoTime();
                client.call(firstSequence + calls);
                now = System.nanoTime();
                histogram.recordValue(Math.min(now - before, MAX_RECORDED_NANOS));
                calls++;
            } while (now - deadline < 0);
            return calls;
        }

        @Override
        public void close() {
            try {
                echo.close();
            } finally {
                client.close();
            }
        }
    }
}
