package io.fabricrpc.transport.rdma.verbs;

import com.ibm.disni.verbs.IbvRecvWR;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvSge;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.SVCPollCq;
import com.ibm.disni.verbs.SVCPostRecv;
import com.ibm.disni.verbs.SVCPostSend;
import io.fabricrpc.transport.rdma.RdmaTestSupport;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

/**
 * The "max-raw" column of Seriema's Table 2 on this test bed: DiSNI's raw verbs through this project's libdisni
 * against perftest, in the same (guest) run, interleaved A-B-B-A-A-B-B-A per size and metric, reported as ratios.
 *
 * <p>Metrics: RDMA WRITE message rate (vs {@code ib_write_bw}, window 128, one signalled WR in 100 like its default cq-mod),
 * RDMA WRITE latency (vs {@code ib_write_lat}: both sides spin on the last bytes of their buffer and write back),
 * SEND latency (vs {@code ib_send_lat}: ping-pong with pre-posted receives). As in perftest's latency tests, every
 * latency work request is signalled and its completion reaped. Latency = median round trip / 2
 * ({@code t_typical}). Small messages are sent inline up to the size perftest reports it inlines.
 *
 * <p>Usage: {@code RawVerbsBenchmark <report.md> [device] [sizes...]}; needs a device and perftest on the PATH.
 */
public final class RawVerbsBenchmark {
    private static final int WINDOW = 128;
    private static final StringBuilder LOG = new StringBuilder();
    private static final int SIGNAL_EVERY = 100; // perftest's default cq-mod for bandwidth tests
    private static final int RATE_MESSAGES = Integer.getInteger("bench.rate.messages", 32 * 1000);
    private static final int LAT_ITERATIONS = Integer.getInteger("bench.lat.iterations", 1000);
    private static final int RECV_RING = 64;
    /** Runs per system per size and metric. */
    private static final int ROUNDS = Integer.getInteger("bench.rounds", 6);
    /** Inline threshold for DiSNI sends; -1 (default) follows what perftest reports it inlines. */
    private static final int INLINE_OVERRIDE = Integer.getInteger("bench.inline", -1);
    /** Where latency runs send from; the peer's data lands at offset 0. */
    private static final int SEND_AREA = 32 * 1024;
    /** Volatile int access to registered direct memory the device writes into. */
    private static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());
    /** One idle strategy per polling thread, so the helpers below allocate nothing per call. */
    private static final ThreadLocal<IdleStrategy> IDLE = ThreadLocal.withInitial(RawVerbsBenchmark::idler);
    private static final Pattern INLINE = Pattern.compile("Inline data is used up to (\\d+) bytes");

    private final String device;
    private int perftestPort = 18600;
    private int inlineLimit = 0;
    private int nextSequence = 1 << 20;
    private SVCPostRecv clientRecv;
    private SVCPostRecv serverRecv;

    private RawVerbsBenchmark(String device) {
        this.device = device;
    }

    record Result(double value, String raw) {
    }

    public static void main(String[] args) throws Exception {
        Path report = Path.of(args[0]);
        String device = args.length > 1 ? args[1] : "rxe0";
        int[] sizes = args.length > 2 ? Arrays.stream(args, 2, args.length).mapToInt(Integer::parseInt).toArray()
                : new int[] {8, 64, 256, 4096};
        RawVerbsBenchmark bench = new RawVerbsBenchmark(device);
        StringBuilder md = new StringBuilder();
        md.append("# Raw RDMA through DiSNI + fabricrpc libdisni vs perftest (max-raw, Seriema Table 2)\n\n")
                .append("Run: ").append(Instant.now()).append(", device ").append(device)
                .append(", JDK ").append(Runtime.version()).append(", ")
                .append(Runtime.getRuntime().availableProcessors()).append(" CPUs. Same guest run, order A-B-B-A ")
                .append("(perftest, DiSNI, DiSNI, perftest, ...) per size and metric, ").append(ROUNDS)
                .append(" runs of each; each value is the best run of that system.\n")
                .append("Rate: ").append(RATE_MESSAGES).append(" messages, window ").append(WINDOW)
                .append(". Latency: ").append(LAT_ITERATIONS).append(" round trips, median RTT/2 (perftest t_typical).\n\n")
                .append("| size (B) | metric | perftest | DiSNI | ratio DiSNI/perftest | target | met |\n")
                .append("|---:|---|---:|---:|---:|---|---|\n");
        List<String> raw = new ArrayList<>();
        boolean allMet = true;
        InetSocketAddress address = RdmaTestSupport.nextAddress();
        String host = address.getAddress().getHostAddress();
        try (VerbsPeer server = VerbsPeer.listen(address, false, 2 * WINDOW, 256);
             VerbsPeer client = VerbsPeer.connect(address, false, 2 * WINDOW, 256)) {
            server.acceptNext();
            client.awaitEstablished();
            server.awaitEstablished();
            // Warm-up: several passes, so the measured loops run C2-compiled code from the first size on.
            for (int i = 0; i < 5; i++) {
                bench.writeRate(client, server, 64);
                bench.writeLatency(client, server, 64);
                bench.sendLatency(client, server, 64);
            }
            for (int size : sizes) {
                final int sz = size;
                double[][] rate = bench.interleave(
                        () -> note("ib_write_bw msg/s", sz, bench.perftest("ib_write_bw", sz, host, raw).value()),
                        () -> note("DiSNI write msg/s", sz, bench.writeRate(client, server, sz)));
                allMet &= row(md, size, "WRITE msg rate (msg/s)", max(rate[0]), max(rate[1]), true, 0.8);
                double[][] wlat = bench.interleave(
                        () -> note("ib_write_lat us", sz, bench.perftest("ib_write_lat", sz, host, raw).value()),
                        () -> note("DiSNI write lat us", sz, bench.writeLatency(client, server, sz)));
                allMet &= row(md, size, "WRITE latency (µs)", min(wlat[0]), min(wlat[1]), false, 1.3);
                double[][] slat = bench.interleave(
                        () -> note("ib_send_lat us", sz, bench.perftest("ib_send_lat", sz, host, raw).value()),
                        () -> note("DiSNI send lat us", sz, bench.sendLatency(client, server, sz)));
                allMet &= row(md, size, "SEND latency (µs)", min(slat[0]), min(slat[1]), false, 1.3);
                System.out.println(md.substring(md.lastIndexOf("| " + size + " | WRITE msg")));
            }
        }
        md.append("\nAll runs in order:\n\n```\n").append(LOG).append("```\n");
        md.append("\nTargets: message rate ≥ 0.8× perftest, latency ≤ 1.3× perftest. All met: ")
                .append(allMet ? "yes" : "no").append(".\n")
                .append("Emulated (TCG) guest: absolute numbers are meaningless, only the ratios measured in the same run count.\n")
                .append("\n<details><summary>perftest result lines</summary>\n\n```\n");
        raw.forEach(line -> md.append(line).append('\n'));
        md.append("```\n</details>\n");
        Files.createDirectories(report.toAbsolutePath().getParent());
        Files.writeString(report, md.toString(), StandardCharsets.UTF_8);
        System.out.println(md);
        System.out.println(allMet ? "BENCH targets met" : "BENCH targets NOT met");
        Runtime.getRuntime().halt(0); // DiSNI leaves no daemon-free threads here, but be sure the guest powers off
    }

    private static double note(String what, int size, double value) {
        String line = String.format(Locale.ROOT, "%-28s %5d B  %.1f%n", what, size, value);
        LOG.append(line);
        System.out.print("bench: " + line);
        return value;
    }

    /** Best run of one system: host noise only ever slows a run down, for both systems alike. */
    private static double max(double[] v) {
        return Arrays.stream(v).max().orElseThrow();
    }

    private static double min(double[] v) {
        return Arrays.stream(v).min().orElseThrow();
    }

    @FunctionalInterface
    interface Run {
        double measure() throws Exception;
    }

    /**
     * Runs baseline and system under test {@link #ROUNDS} times each in the order A B B A A B B A ...
     * @return {baseline results, system-under-test results}
     */
    private double[][] interleave(Run baseline, Run underTest) throws Exception {
        double[][] out = new double[2][ROUNDS];
        for (int r = 0; r < ROUNDS; r++) {
            boolean baselineFirst = (r & 1) == 0;
            out[baselineFirst ? 0 : 1][r] = (baselineFirst ? baseline : underTest).measure();
            out[baselineFirst ? 1 : 0][r] = (baselineFirst ? underTest : baseline).measure();
        }
        return out;
    }

    private static boolean row(StringBuilder md, int size, String metric, double perftest, double disni,
                               boolean higherIsBetter, double target) {
        double ratio = disni / perftest;
        boolean met = higherIsBetter ? ratio >= target : ratio <= target;
        md.append(String.format(Locale.ROOT, "| %d | %s | %.1f | %.1f | %.2f | %s %.1f× | %s |%n", size, metric,
                perftest, disni, ratio, higherIsBetter ? "≥" : "≤", target, met ? "yes" : "**no**"));
        return met;
    }

    // ---------- perftest ----------

    private int lastInline;

    /** Runs a perftest server and client on this device; returns msg/s (bw) or t_typical µs (lat). */
    private Result perftest(String tool, int size, String host, List<String> raw) throws IOException, InterruptedException {
        for (int attempt = 1; ; attempt++) {
            Result r = perftestOnce(tool, size, host, raw);
            // perftest occasionally prints "inf"/"-nan" when its timer misbehaves under emulation: run it again.
            if (Double.isFinite(r.value()) && r.value() > 0 || attempt == 3) {
                return r;
            }
        }
    }

    private Result perftestOnce(String tool, int size, String host, List<String> raw) throws IOException, InterruptedException {
        int port = perftestPort++;
        boolean bw = tool.endsWith("_bw");
        List<String> common = new ArrayList<>(List.of(tool, "-d", device, "-x", "1", "-F", "-s", Integer.toString(size),
                "-n", Integer.toString(bw ? RATE_MESSAGES : LAT_ITERATIONS), "-p", Integer.toString(port)));
        Process server = new ProcessBuilder(common).redirectErrorStream(true).start();
        List<String> clientCmd = new ArrayList<>(common);
        clientCmd.add(host);
        String out = null;
        for (int attempt = 0; attempt < 30 && out == null; attempt++) {
            Thread.sleep(attempt == 0 ? 1000 : 500);
            Process client = new ProcessBuilder(clientCmd).redirectErrorStream(true).start();
            String text = new String(client.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (client.waitFor(120, TimeUnit.SECONDS) && client.exitValue() == 0) {
                out = text;
            } else if (!server.isAlive()) {
                throw new IOException(tool + " server exited: " + new String(server.getInputStream().readAllBytes()));
            }
        }
        server.waitFor(30, TimeUnit.SECONDS);
        server.destroyForcibly();
        if (out == null) {
            throw new IOException(tool + " client never connected");
        }
        Matcher inline = INLINE.matcher(out);
        lastInline = inline.find() ? Integer.parseInt(inline.group(1)) : 0;
        for (String line : out.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 5 && f[0].equals(Integer.toString(size)) && f[1].matches("\\d+")) {
                raw.add(tool + " " + line.trim());
                // bw: #bytes #iterations BW-peak BW-avg MsgRate[Mpps]; lat: #bytes #iter t_min t_max t_typical ...
                double v;
                try {
                    v = Double.parseDouble(f[4]);
                } catch (NumberFormatException e) {
                    v = Double.NaN;
                }
                return new Result(bw ? v * 1e6 : v, line);
            }
        }
        throw new IOException(tool + " printed no result line:\n" + out);
    }

    // ---------- DiSNI ----------

    private static SVCPostSend prepare(VerbsPeer from, int opcode, int offset, int size, long remote, int rkey, int flags,
                                       long wrId) throws IOException {
        IbvSge sge = new IbvSge();
        sge.setAddr(from.mr.getAddr() + offset);
        sge.setLength(size);
        sge.setLkey(from.mr.getLkey());
        LinkedList<IbvSge> sges = new LinkedList<>();
        sges.add(sge);
        IbvSendWR wr = new IbvSendWR();
        wr.setWr_id(wrId);
        wr.setSg_list(sges);
        wr.setOpcode(opcode);
        wr.setSend_flags(flags);
        wr.getRdma().setRemote_addr(remote);
        wr.getRdma().setRkey(rkey);
        return from.qp.postSend(List.of(wr), null);
    }

    private int inlineFlag(int size) {
        int limit = INLINE_OVERRIDE >= 0 ? INLINE_OVERRIDE : inlineLimit;
        return size <= limit ? IbvSendWR.IBV_SEND_INLINE : 0;
    }

    /** Window of WRITEs, one in {@link #SIGNAL_EVERY} signalled (perftest's cq-mod). @return messages per second */
    private double writeRate(VerbsPeer client, VerbsPeer server, int size) throws IOException {
        int flags = inlineFlag(size);
        SVCPostSend quiet = prepare(client, IbvSendWR.IBV_WR_RDMA_WRITE, 0, size, server.mr.getAddr(), server.mr.getRkey(),
                flags, 1);
        SVCPostSend signalled = prepare(client, IbvSendWR.IBV_WR_RDMA_WRITE, 0, size, server.mr.getAddr(),
                server.mr.getRkey(), flags | IbvSendWR.IBV_SEND_SIGNALED, 2);
        IbvWC[] wcs = newWcs(16);
        SVCPollCq poll = client.cq.poll(wcs, wcs.length);
        int n = RATE_MESSAGES;
        long posted = 0;
        long completed = 0;
        IdleStrategy idle = idler();
        long start = System.nanoTime();
        long deadline = start + TimeUnit.SECONDS.toNanos(120);
        while (completed < n) {
            while (posted < n && posted - completed < WINDOW) {
                (++posted % SIGNAL_EVERY == 0 ? signalled : quiet).execute();
            }
            int got = poll.execute().getPolls();
            for (int i = 0; i < got; i++) {
                WorkCompletionException.check(wcs[i], "RDMA_WRITE");
                completed += SIGNAL_EVERY;
            }
            idle.idle(got);
            if (System.nanoTime() > deadline) {
                throw new IOException("write-rate run did not finish in 120 s (" + completed + "/" + n + ")");
            }
        }
        double rate = n / ((System.nanoTime() - start) / 1e9);
        quiet.free();
        signalled.free();
        poll.free();
        return rate;
    }

    /**
     * ib_write_lat style ping-pong: each side writes from {@link #SEND_AREA} of its buffer into offset 0 of the peer's
     * and spins on the last 4 bytes of its own offset 0 for the peer's sequence number. @return median RTT/2 in µs
     */
    private double writeLatency(VerbsPeer client, VerbsPeer server, int size) throws Exception {
        int seqOffset = size - 4;
        int flags = inlineFlag(size) | IbvSendWR.IBV_SEND_SIGNALED;
        SVCPostSend ping = prepare(client, IbvSendWR.IBV_WR_RDMA_WRITE, SEND_AREA, size, server.mr.getAddr(),
                server.mr.getRkey(), flags, 1);
        SVCPostSend pong = prepare(server, IbvSendWR.IBV_WR_RDMA_WRITE, SEND_AREA, size, client.mr.getAddr(),
                client.mr.getRkey(), flags, 2);
        ByteBuffer clientMem = client.buffer;
        ByteBuffer serverMem = server.buffer;
        int iterations = LAT_ITERATIONS;
        int base = nextSequence;
        nextSequence += iterations + 1; // monotonic, so stale bytes from earlier runs never match
        long[] rtt = new long[iterations];
        Thread responder = Thread.ofPlatform().name("bench-pong").start(() -> {
            IbvWC[] wcs = newWcs(4);
            IdleStrategy idle = idler();
            try {
                SVCPollCq poll = server.cq.poll(wcs, wcs.length);
                for (int i = 0; i < iterations; i++) {
                    int seq = base + i;
                    // Volatile read: the message is complete once its last bytes show the new sequence number
                    // (RC places the payload in order).
                    while ((int) INT.getVolatile(serverMem, seqOffset) != seq) {
                        idle.idle();
                    }
                    idle.reset();
                    INT.set(serverMem, SEND_AREA + seqOffset, seq); // plain: the device reads it after the post below
                    pong.execute();
                    awaitOne(poll, wcs, "RDMA_WRITE");
                }
                poll.free();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        IbvWC[] wcs = newWcs(4);
        SVCPollCq poll = client.cq.poll(wcs, wcs.length);
        IdleStrategy idle = idler();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        for (int i = 0; i < iterations; i++) {
            int seq = base + i;
            INT.set(clientMem, SEND_AREA + seqOffset, seq); // plain: the device reads it after the post below
            long t0 = System.nanoTime();
            ping.execute();
            for (int spins = 1; (int) INT.getVolatile(clientMem, seqOffset) != seq; spins++) {
                if ((spins & 0xFFF) == 0 && System.nanoTime() > deadline) { // clock reads are costly when emulated
                    throw new IOException("write-latency run stalled at iteration " + i);
                }
                idle.idle();
            }
            idle.reset();
            rtt[i] = System.nanoTime() - t0;
            awaitOne(poll, wcs, "RDMA_WRITE");
        }
        responder.join(TimeUnit.SECONDS.toMillis(30));
        ping.free();
        pong.free();
        poll.free();
        return medianHalfMicros(rtt);
    }

    /** ib_send_lat style ping-pong with a ring of pre-posted receives. @return median RTT/2 in µs */
    private double sendLatency(VerbsPeer client, VerbsPeer server, int size) throws Exception {
        int flags = inlineFlag(size) | IbvSendWR.IBV_SEND_SIGNALED;
        SVCPostSend ping = prepare(client, IbvSendWR.IBV_WR_SEND, 0, size, 0, 0, flags, 1);
        SVCPostSend pong = prepare(server, IbvSendWR.IBV_WR_SEND, 0, size, 0, 0, flags, 2);
        if (clientRecv == null) {
            // One ring per connection, reposted one for one, so it never exceeds the receive queue.
            clientRecv = recv(client, 8192, 4096);
            serverRecv = recv(server, 8192, 4096);
            for (int i = 0; i < RECV_RING; i++) {
                clientRecv.execute();
                serverRecv.execute();
            }
        }
        SVCPostRecv serverRecv = this.serverRecv;
        SVCPostRecv clientRecv = this.clientRecv;
        int iterations = LAT_ITERATIONS;
        long[] rtt = new long[iterations];
        Thread responder = Thread.ofPlatform().name("bench-pong").start(() -> {
            IbvWC[] wcs = newWcs(4);
            try {
                SVCPollCq poll = server.cq.poll(wcs, wcs.length);
                int pendingSends = 0;
                for (int i = 0; i < iterations; i++) {
                    pendingSends -= awaitRecv(poll, wcs);
                    serverRecv.execute();
                    pong.execute();
                    pendingSends++;
                }
                while (pendingSends > 0) {
                    pendingSends -= drainSends(poll, wcs);
                }
                poll.free();
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        IbvWC[] wcs = newWcs(4);
        SVCPollCq poll = client.cq.poll(wcs, wcs.length);
        int pendingSends = 0;
        for (int i = 0; i < iterations; i++) {
            long t0 = System.nanoTime();
            ping.execute();
            pendingSends++;
            pendingSends -= awaitRecv(poll, wcs);
            rtt[i] = System.nanoTime() - t0;
            clientRecv.execute();
        }
        while (pendingSends > 0) {
            pendingSends -= drainSends(poll, wcs);
        }
        responder.join(TimeUnit.SECONDS.toMillis(30));
        ping.free();
        pong.free();
        poll.free();
        return medianHalfMicros(rtt);
    }

    private static SVCPostRecv recv(VerbsPeer peer, int offset, int size) throws IOException {
        IbvSge sge = new IbvSge();
        sge.setAddr(peer.mr.getAddr() + offset);
        sge.setLength(size);
        sge.setLkey(peer.mr.getLkey());
        LinkedList<IbvSge> sges = new LinkedList<>();
        sges.add(sge);
        IbvRecvWR wr = new IbvRecvWR();
        wr.setWr_id(99);
        wr.setSg_list(sges);
        return peer.qp.postRecv(List.of(wr), null);
    }

    /**
     * Spin, then yield: on a 2-vCPU guest the kernel's rxe work runs in softirq/ksoftirqd on the same CPUs as the
     * pollers, and a pure busy spin can hold it off for a whole time slice.
     */
    private static IdleStrategy idler() {
        return new BackoffIdleStrategy(2000, 1_000_000, 1000, 50_000);
    }

    private static IbvWC[] newWcs(int n) {
        IbvWC[] wcs = new IbvWC[n];
        for (int i = 0; i < n; i++) {
            wcs[i] = new IbvWC();
        }
        return wcs;
    }

    private static void awaitOne(SVCPollCq poll, IbvWC[] wcs, String op) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        IdleStrategy idle = IDLE.get();
        idle.reset();
        while (true) {
            int n = poll.execute().getPolls();
            idle.idle(n);
            if (n > 0) {
                WorkCompletionException.check(wcs[0], op);
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("no " + op + " completion within 30 s");
            }
        }
    }

    /** Polls until one receive completed. @return how many send completions were reaped on the way */
    private static int awaitRecv(SVCPollCq poll, IbvWC[] wcs) throws IOException {
        int sends = 0;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        IdleStrategy idle = IDLE.get();
        idle.reset();
        while (true) {
            int n = poll.execute().getPolls();
            idle.idle(n);
            boolean received = false;
            for (int i = 0; i < n; i++) {
                if (wcs[i].getStatus() != 0) {
                    throw new WorkCompletionException("SEND/RECV", wcs[i].getWr_id(), wcs[i].getStatus());
                }
                if (wcs[i].getOpcode() == IbvWC.IbvWcOpcode.IBV_WC_RECV.getOpcode()) {
                    received = true;
                } else {
                    sends++;
                }
            }
            if (received) {
                return sends;
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("no receive completion within 30 s");
            }
        }
    }

    private static int drainSends(SVCPollCq poll, IbvWC[] wcs) throws IOException {
        int n = poll.execute().getPolls();
        for (int i = 0; i < n; i++) {
            WorkCompletionException.check(wcs[i], "SEND");
        }
        return n;
    }

    private static double medianHalfMicros(long[] rttNanos) {
        long[] sorted = rttNanos.clone();
        Arrays.sort(sorted);
        return sorted[sorted.length / 2] / 2.0 / 1000.0;
    }
}
