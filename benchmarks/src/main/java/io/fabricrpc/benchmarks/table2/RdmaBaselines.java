package io.fabricrpc.benchmarks.table2;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The external baselines of the RDMA Table 2, run by the launching benchmark between the rounds of the ranks
 * (which wait at the round gate meanwhile): perftest's {@code ib_write_bw} (message rate; its bandwidth is rate x
 * size) at every size, and DaRPC calls per second at every payload size. Each result is a {@link Table2Result} of
 * pseudo-column {@link #IB_WRITE_BW} or {@link #DARPC} in the round it ran before, so the report pairs it with that
 * round's columns. The DaRPC server and client JVMs start once and stay (idle, blocked) between rounds. Not
 * thread-safe; {@link #close()} kills the processes it started.
 */
final class RdmaBaselines implements AutoCloseable {
    static final String IB_WRITE_BW = "ib_write_bw";
    static final String DARPC = "darpc";
    /** Position of the baselines in a round's order: before the columns (which start at 0). */
    private static final int POSITION = -1;

    record Settings(String device, String host, int perftestIterations, List<Integer> perftestSizes,
                    boolean darpc, List<Integer> darpcSizes, double darpcSeconds, int darpcDepth, int darpcInline,
                    boolean darpcPolling, double darpcWarmupSeconds, List<String> jvm, Path jar) {
    }

    private final Settings settings;
    private final List<String> rawLines = new ArrayList<>();
    private int port = 18700;
    private Process darpcServer;
    private Process darpcClient;
    private Writer darpcCommands;
    private final BlockingQueue<String> darpcLines = new LinkedBlockingQueue<>();

    RdmaBaselines(Settings settings) {
        this.settings = settings;
    }

    /** perftest's result lines and DaRPC's, in the order they ran (for the report). */
    List<String> rawLines() {
        return rawLines;
    }

    /** Starts the DaRPC server and client (when DaRPC is measured); bounded by {@code timeoutMillis}. */
    void start(long timeoutMillis) throws IOException, InterruptedException {
        if (!settings.darpc()) {
            return;
        }
        int darpcPort = port++;
        List<String> server = java("server", Integer.toString(darpcPort), Integer.toString(settings.darpcInline()),
                Boolean.toString(settings.darpcPolling()));
        darpcServer = new ProcessBuilder(server).redirectErrorStream(true).start();
        BlockingQueue<String> serverLines = new LinkedBlockingQueue<>();
        pump(darpcServer, serverLines, "darpc-server");
        awaitLine(serverLines, DarpcBaseline.READY, timeoutMillis, "the DaRPC server to listen");
        List<String> client = java("client", Integer.toString(darpcPort), Integer.toString(settings.darpcInline()),
                Integer.toString(settings.darpcDepth()));
        darpcClient = new ProcessBuilder(client).redirectErrorStream(true).start();
        darpcCommands = new OutputStreamWriter(darpcClient.getOutputStream(), StandardCharsets.UTF_8);
        pump(darpcClient, darpcLines, "darpc-client");
        awaitLine(darpcLines, DarpcBaseline.READY, timeoutMillis, "the DaRPC client to connect");
        // Warm-up, as the ranks get theirs: under emulation DaRPC's first second runs at a tenth of its pace (JIT).
        for (int pass = 0; pass < 2 && settings.darpcWarmupSeconds() > 0; pass++) {
            for (int size : settings.darpcSizes()) {
                String line = darpc(size, settings.darpcWarmupSeconds() / 2);
                rawLines.add("warm-up: " + line);
            }
        }
    }

    private String darpc(int size, double seconds) throws IOException, InterruptedException {
        darpcCommands.write(String.format(Locale.ROOT, "run %d %s%n", size, seconds));
        darpcCommands.flush();
        long bound = (long) (seconds * 1000) + 30_000;
        return awaitLine(darpcLines, DarpcBaseline.RESULT + " " + size + " ", bound, "DaRPC at " + size + " B");
    }

    private List<String> java(String mode, String port, String inline, String last) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(settings.jvm());
        cmd.addAll(List.of("-Xmx256m", "-cp", settings.jar().toString(), DarpcBaseline.class.getName(), mode,
                settings.host(), port, inline, last));
        return cmd;
    }

    /** Runs every baseline once for {@code round}; returns its results. */
    List<Table2Result> runRound(int round) throws IOException, InterruptedException {
        List<Table2Result> results = new ArrayList<>();
        for (int size : settings.perftestSizes()) {
            double rate = perftest(size);
            long calls = settings.perftestIterations();
            results.add(new Table2Result(round, IB_WRITE_BW, size, POSITION, calls, Math.round(calls * 1e9 / rate),
                    0, 0, 0, 0, 0, 0));
            System.out.printf(Locale.ROOT, "round %d, %d B: ib_write_bw %,.0f msg/s%n", round, size, rate);
        }
        if (settings.darpc()) {
            for (int size : settings.darpcSizes()) {
                String line = darpc(size, settings.darpcSeconds());
                String[] f = line.split("\\s+");
                long calls = Long.parseLong(f[2]);
                long nanos = Long.parseLong(f[3]);
                rawLines.add("round " + round + ": " + line);
                results.add(new Table2Result(round, DARPC, size, POSITION, calls, nanos, 0, 0, 0, 0, 0, 0));
                System.out.printf(Locale.ROOT, "round %d, %d B: darpc %,.0f calls/s%n", round, size, calls * 1e9 / nanos);
            }
        }
        return results;
    }

    /** One ib_write_bw server and client on the device; msg/s (retried when perftest prints no finite rate). */
    private double perftest(int size) throws IOException, InterruptedException {
        for (int attempt = 1; ; attempt++) {
            double rate = perftestOnce(size);
            if (Double.isFinite(rate) && rate > 0) {
                return rate;
            }
            if (attempt == PERFTEST_ATTEMPTS) {
                throw new IOException("ib_write_bw at " + size + " B printed no positive message rate "
                        + PERFTEST_ATTEMPTS + " times; last result line: " + lastPerftestLine);
            }
            System.out.println("ib_write_bw at " + size + " B printed no positive message rate (" + lastPerftestLine
                    + "); trying again");
        }
    }

    /** Under the emulator perftest now and then prints a rate of 0.000000 (or not a number); it is run again. */
    private static final int PERFTEST_ATTEMPTS = 5;
    private String lastPerftestLine = "";

    private double perftestOnce(int size) throws IOException, InterruptedException {
        List<String> common = List.of("ib_write_bw", "-d", settings.device(), "-x", "1", "-F", "-s",
                Integer.toString(size), "-n", Integer.toString(settings.perftestIterations()), "-p",
                Integer.toString(port++));
        Process server = new ProcessBuilder(common).redirectErrorStream(true).start();
        try {
            List<String> clientCmd = new ArrayList<>(common);
            clientCmd.add(settings.host());
            String out = null;
            for (int attempt = 0; attempt < 40 && out == null; attempt++) {
                Thread.sleep(attempt == 0 ? 300 : 250); // the server needs a moment to listen
                Process client = new ProcessBuilder(clientCmd).redirectErrorStream(true).start();
                String text = new String(client.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (client.waitFor(120, TimeUnit.SECONDS) && client.exitValue() == 0) {
                    out = text;
                } else if (!server.isAlive()) {
                    throw new IOException("ib_write_bw server exited: "
                            + new String(server.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
                }
            }
            if (out == null) {
                throw new IOException("ib_write_bw client never connected to its server at " + settings.host());
            }
            server.waitFor(30, TimeUnit.SECONDS);
            for (String line : out.split("\n")) {
                String[] f = line.trim().split("\\s+");
                // #bytes #iterations BW-peak BW-average MsgRate[Mpps]
                if (f.length >= 5 && f[0].equals(Integer.toString(size)) && f[1].matches("\\d+")) {
                    lastPerftestLine = line.trim();
                    rawLines.add("ib_write_bw " + line.trim());
                    try {
                        return Double.parseDouble(f[4]) * 1e6;
                    } catch (NumberFormatException e) {
                        return Double.NaN;
                    }
                }
            }
            throw new IOException("ib_write_bw printed no result line for " + size + " B:\n" + out);
        } finally {
            server.destroyForcibly();
        }
    }

    private static void pump(Process process, BlockingQueue<String> lines, String name) {
        Thread.ofPlatform().daemon().name(name + "-output").start(() -> {
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    System.out.println(name + ": " + line);
                    lines.add(line);
                }
            } catch (IOException e) {
                lines.add(name + " output failed: " + e);
            }
        });
    }

    private String awaitLine(BlockingQueue<String> lines, String prefix, long timeoutMillis, String what)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (true) {
            String line = lines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            if (line == null) {
                throw new IOException("waited " + timeoutMillis + " ms for " + what + " (a line starting '" + prefix
                        + "'); DaRPC server alive " + (darpcServer != null && darpcServer.isAlive()) + ", client alive "
                        + (darpcClient != null && darpcClient.isAlive()));
            }
            if (line.startsWith(prefix)) {
                return line;
            }
            if (line.contains(" failed: ")) {
                throw new IOException(what + ": " + line);
            }
        }
    }

    @Override
    public void close() {
        try {
            if (darpcCommands != null) {
                darpcCommands.write("quit\n");
                darpcCommands.flush();
            }
        } catch (IOException ignored) {
            // the client is gone already; it is killed below anyway
        }
        for (Process p : new Process[] {darpcClient, darpcServer}) {
            if (p != null) {
                p.destroyForcibly();
            }
        }
    }
}
