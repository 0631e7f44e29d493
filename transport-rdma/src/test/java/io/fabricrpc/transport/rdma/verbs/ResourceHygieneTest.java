package io.fabricrpc.transport.rdma.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.ibm.disni.verbs.IbvCQ;
import com.ibm.disni.verbs.IbvCompChannel;
import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvPd;
import com.ibm.disni.verbs.IbvSendWR;
import io.fabricrpc.transport.rdma.RdmaTestSupport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

/**
 * Opens and closes endpoints, CQs and MRs many times ({@code fabricrpc.rdma.hygiene.iterations}, default 1000) and
 * checks that the process's file descriptors and its verbs objects ({@code rdma resource show}) return
 * to where they started.
 */
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class ResourceHygieneTest {
    private static final Pattern OWNER = Pattern.compile("\\bpid (\\d+) ");
    private static final int ITERATIONS = Integer.getInteger("fabricrpc.rdma.hygiene.iterations", 1000);

    static long openFds() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }

    /**
     * This process's verbs objects per kind, from {@code rdma resource show <kind>}; empty when the rdma tool is
     * missing. Rows carry the id of the creating thread, so they are matched against all of our thread ids.
     */
    static Map<String, Long> deviceResources() throws IOException, InterruptedException {
        Set<String> ours = new HashSet<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
            tasks.forEach(t -> ours.add(t.getFileName().toString()));
        }
        ours.add(Long.toString(ProcessHandle.current().pid()));
        Map<String, Long> counts = new TreeMap<>();
        for (String kind : List.of("pd", "cq", "qp", "mr", "cm_id")) {
            Process p = new ProcessBuilder("rdma", "resource", "show", kind).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
                return Map.of();
            }
            counts.put(kind, out.lines().filter(line -> {
                Matcher m = OWNER.matcher(line);
                return m.find() && ours.contains(m.group(1));
            }).count());
        }
        return counts;
    }

    private static void report(String what, long startNanos) {
        System.out.printf("hygiene: %d x %s in %d ms%n", ITERATIONS, what,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos));
    }

    @Test
    void memoryRegionsAndCompletionQueues() throws Exception {
        try (VerbsPeer anchor = VerbsPeer.listen(RdmaTestSupport.nextAddress(), false)) {
            IbvContext context = anchor.listenId.getVerbs();
            IbvPd pd = context.allocPd();
            ByteBuffer buffer = ByteBuffer.allocateDirect(1 << 20);
            cycleMrAndCq(pd, context, buffer, 10); // warm up DiSNI's buffer pools
            long fds = openFds();
            Map<String, Long> resources = deviceResources();
            // The pid filter must see this process's objects, or the comparison below would prove nothing.
            assertTrue(resources.isEmpty() || resources.get("pd") >= 1, "rdma resource show lists our PD: " + resources);
            long start = System.nanoTime();
            cycleMrAndCq(pd, context, buffer, ITERATIONS);
            report("(reg_mr 1 MiB + dereg_mr, comp channel + CQ create/destroy)", start);
            assertEquals(fds, openFds(), "file descriptors");
            assertEquals(resources, deviceResources(), "device resources");
            pd.deallocPd();
        }
    }

    private static void cycleMrAndCq(IbvPd pd, IbvContext context, ByteBuffer buffer, int n) throws IOException {
        for (int i = 0; i < n; i++) {
            IbvMr mr = pd.regMr(buffer, VerbsPeer.ACCESS).execute().free().getMr();
            mr.deregMr().execute().free();
            IbvCompChannel channel = context.createCompChannel();
            IbvCQ cq = context.createCQ(channel, 32, 0);
            cq.destroyCQ();
            channel.destroyCompChannel();
        }
    }

    @Test
    void connectedEndpoints() throws Exception {
        cycleEndpoints(5);
        long fds = openFds();
        Map<String, Long> resources = deviceResources();
        long start = System.nanoTime();
        cycleEndpoints(ITERATIONS);
        report("(listen + connect + accept + one RDMA WRITE + close, both ends)", start);
        assertEquals(fds, openFds(), "file descriptors");
        assertEquals(resources, deviceResources(), "device resources");
    }

    private static void cycleEndpoints(int n) throws IOException {
        for (int i = 0; i < n; i++) {
            InetSocketAddress address = RdmaTestSupport.nextAddress();
            try (VerbsPeer server = VerbsPeer.listen(address, false);
                 VerbsPeer client = VerbsPeer.connect(address, false)) {
                server.acceptNext();
                client.awaitEstablished();
                server.awaitEstablished();
                client.post(IbvSendWR.IBV_WR_RDMA_WRITE, i, 0, 64, server.mr.getAddr(), server.mr.getRkey(), 0);
                client.awaitSuccess("RDMA_WRITE");
            }
        }
    }
}
