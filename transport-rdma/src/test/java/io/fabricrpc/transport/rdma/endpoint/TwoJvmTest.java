package io.fabricrpc.transport.rdma.endpoint;

import static io.fabricrpc.transport.rdma.verbs.VerbsTestData.assertPattern;
import static io.fabricrpc.transport.rdma.verbs.VerbsTestData.fill;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.ibm.disni.RdmaActiveEndpointGroup;
import com.ibm.disni.verbs.IbvSendWR;
import io.fabricrpc.transport.rdma.RdmaTestSupport;
import io.fabricrpc.transport.rdma.verbs.WorkCompletionException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

/** Client in this JVM, server ({@link PeerProcess}) in a second JVM, connected through rdma_cm on a real device. */
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class TwoJvmTest {
    private Process peer;
    private RdmaActiveEndpointGroup<TestEndpoint> group;
    private TestEndpoint client;

    private InetSocketAddress startPeer(String mode) throws Exception {
        InetSocketAddress address = RdmaTestSupport.nextAddress();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new java.util.ArrayList<>(List.of(java, "--enable-native-access=ALL-UNNAMED",
                RdmaTestSupport.JVM_FLAGS_EXPORTS, "-Xmx256m"));
        // The parent's JIT tier limit too: the emulated guest crashes JVMs that patch tiered code (see the README).
        command.addAll(io.fabricrpc.fabric.LocalLauncher.inheritedJvmFlags().stream()
                .filter(flag -> flag.startsWith("-XX:TieredStopAtLevel=")).toList());
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), PeerProcess.class.getName(),
                address.getAddress().getHostAddress(), Integer.toString(address.getPort()), mode));
        peer = new ProcessBuilder(command).redirectErrorStream(true).start();
        CountDownLatch listening = new CountDownLatch(1);
        Thread pump = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(peer.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    System.out.println("[peer] " + line);
                    if (line.startsWith("LISTENING")) {
                        listening.countDown();
                    }
                }
            } catch (IOException ignored) {
                // the peer went away; its exit status tells the story
            }
        }, "peer-output");
        pump.setDaemon(true);
        pump.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!listening.await(1, TimeUnit.SECONDS)) {
            assertTrue(peer.isAlive(), "peer JVM exited with status " + (peer.isAlive() ? -1 : peer.exitValue())
                    + " before it listened");
            assertTrue(System.nanoTime() < deadline, "peer JVM did not start listening within 120 s");
        }
        return address;
    }

    private void connect(InetSocketAddress address) throws Exception {
        group = EndpointApiTest.group(false);
        client = group.createEndpoint();
        client.connect(address, 5000);
        client.register();
        client.postRecv(1, PeerProcess.CTRL_IN, 64);
    }

    @AfterEach
    void close() throws Exception {
        if (client != null) {
            client.close();
        }
        if (group != null) {
            group.close();
        }
        if (peer != null && peer.isAlive()) {
            peer.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void writeImmediateReadAndSendBetweenTwoJvms() throws Exception {
        connect(startPeer("normal"));
        client.await("RECV");
        long remote = client.buffer.getLong(PeerProcess.CTRL_IN);
        int rkey = client.buffer.getInt(PeerProcess.CTRL_IN + 8);
        int seed = 1234;
        fill(client.buffer, 0, PeerProcess.DATA_LENGTH, seed);
        client.postRecv(2, PeerProcess.CTRL_IN, 64);
        client.post(IbvSendWR.IBV_WR_RDMA_WRITE_WITH_IMM, 10, 0, PeerProcess.DATA_LENGTH, remote, rkey, seed);
        client.await("RDMA_WRITE_WITH_IMM");
        client.await("RECV");
        assertEquals(1, client.buffer.getInt(PeerProcess.CTRL_IN), "peer found a mismatch in the written bytes");
        client.post(IbvSendWR.IBV_WR_RDMA_READ, 11, 0, PeerProcess.READ_LENGTH, remote + PeerProcess.READ_OFFSET, rkey, 0);
        client.await("RDMA_READ");
        assertPattern(client.buffer, 0, PeerProcess.READ_LENGTH, seed + 1);
        client.buffer.putInt(PeerProcess.CTRL_OUT, 0xB7E);
        client.post(IbvSendWR.IBV_WR_SEND, 12, PeerProcess.CTRL_OUT, 4, 0, 0, 0);
        client.await("SEND");
        assertTrue(peer.waitFor(60, TimeUnit.SECONDS), "peer did not exit");
        assertEquals(0, peer.exitValue(), "peer exit status");
    }

    @Test
    void peerProcessDyingMidTransferFailsTheWritesWithAClearError() throws Exception {
        connect(startPeer("die"));
        client.await("RECV");
        long remote = client.buffer.getLong(PeerProcess.CTRL_IN);
        int rkey = client.buffer.getInt(PeerProcess.CTRL_IN + 8);
        client.post(IbvSendWR.IBV_WR_SEND, 1, PeerProcess.CTRL_OUT, 4, 0, 0, 0);
        client.await("SEND");
        WorkCompletionException failure = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        for (long wrId = 100; failure == null && System.nanoTime() < deadline; wrId++) {
            client.post(IbvSendWR.IBV_WR_RDMA_WRITE, wrId, 0, 4096, remote, rkey, 0);
            try {
                client.await("RDMA_WRITE");
            } catch (WorkCompletionException e) {
                failure = e;
            }
        }
        assertNotNull(failure, "writes into a dead process kept succeeding for 60 s");
        assertEquals("RDMA_WRITE", failure.operation());
        assertTrue(peer.waitFor(30, TimeUnit.SECONDS));
        assertEquals(3, peer.exitValue());
    }
}
