package io.fabricrpc.transport.rdma.verbs;

import static io.fabricrpc.transport.rdma.verbs.VerbsTestData.assertPattern;
import static io.fabricrpc.transport.rdma.verbs.VerbsTestData.fill;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvWC;
import io.fabricrpc.transport.rdma.RdmaTestSupport;
import java.io.IOException;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** DiSNI's raw verbs API over this project's libdisni, against a real device, both peers in this JVM. */
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class VerbsApiTest {
    private VerbsPeer server;
    private VerbsPeer client;

    /** Connects a client to a fresh listener; the server reaps completions through events unless told otherwise. */
    private void connect(boolean serverEvents, boolean clientEvents) throws IOException {
        InetSocketAddress address = RdmaTestSupport.nextAddress();
        server = VerbsPeer.listen(address, serverEvents);
        client = VerbsPeer.connect(address, clientEvents);
        server.acceptNext();
        // The client's librdmacm answers the server's REP (RTU) while it reads its event, so it goes first.
        client.awaitEstablished();
        server.awaitEstablished();
    }

    @AfterEach
    void close() throws IOException {
        if (client != null) {
            client.close();
        }
        if (server != null) {
            server.close();
        }
    }

    @Test
    void deviceResourcesAreReachableThroughTheConnection() throws IOException {
        connect(true, false);
        assertTrue(client.qp.getQp_num() > 0 && server.qp.getQp_num() > 0);
        assertTrue(client.id.getVerbs().getCmd_fd() >= 0);
        assertTrue(client.id.getVerbs().getNumCompVectors() >= 1);
        assertTrue(client.pd.getHandle() >= 0);
        assertTrue(client.mr.getLkey() != 0 && server.mr.getRkey() != 0);
        assertEquals(RdmaTestSupport.rdmaAddress(), ((InetSocketAddress) client.id.getSource()).getAddress());
        assertEquals(server.listenId.getSource(), client.id.getDestination());
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 8, 64, 4096, 65536})
    void rdmaWriteLandsByteForByte(int size) throws IOException {
        connect(true, false);
        fill(client.buffer, 0, size, size);
        client.post(IbvSendWR.IBV_WR_RDMA_WRITE, 1, 0, size, server.mr.getAddr(), server.mr.getRkey(), 0);
        IbvWC wc = client.awaitSuccess("RDMA_WRITE");
        assertEquals(1, wc.getWr_id());
        assertEquals(IbvWC.IbvWcOpcode.IBV_WC_RDMA_WRITE.getOpcode(), wc.getOpcode());
        assertPattern(server.buffer, 0, size, size);
    }

    @Test
    void writeWithImmediateDeliversDataAndTheImmediate() throws IOException {
        connect(true, false);
        server.postRecv(77, 0, 0);
        fill(client.buffer, 0, 3000, 5);
        client.post(IbvSendWR.IBV_WR_RDMA_WRITE_WITH_IMM, 2, 0, 3000, server.mr.getAddr() + 100, server.mr.getRkey(),
                0x01020304);
        client.awaitSuccess("RDMA_WRITE_WITH_IMM");
        IbvWC wc = server.awaitSuccess("RECV");
        assertEquals(77, wc.getWr_id());
        assertEquals(IbvWC.IbvWcOpcode.IBV_WC_RECV_RDMA_WITH_IMM.getOpcode(), wc.getOpcode());
        assertEquals(0x01020304, wc.getImm_data());
        assertEquals(2, wc.getWc_flags() & 2, "IBV_WC_WITH_IMM");
        assertPattern(server.buffer, 100, 3000, 5);
    }

    @ParameterizedTest
    @ValueSource(ints = {8, 4096, 65536})
    void rdmaReadFetchesRemoteBytes(int size) throws IOException {
        connect(true, false);
        fill(server.buffer, 0, size, 11);
        client.post(IbvSendWR.IBV_WR_RDMA_READ, 3, 0, size, server.mr.getAddr(), server.mr.getRkey(), 0);
        IbvWC wc = client.awaitSuccess("RDMA_READ");
        assertEquals(IbvWC.IbvWcOpcode.IBV_WC_RDMA_READ.getOpcode(), wc.getOpcode());
        assertPattern(client.buffer, 0, size, 11);
    }

    @Test
    void sendIsReceivedIntoThePostedBuffer() throws IOException {
        connect(true, false);
        server.postRecv(9, 512, 4096);
        fill(client.buffer, 0, 3000, 21);
        client.post(IbvSendWR.IBV_WR_SEND, 4, 0, 3000, 0, 0, 0);
        client.awaitSuccess("SEND");
        IbvWC wc = server.awaitSuccess("RECV");
        assertEquals(9, wc.getWr_id());
        assertEquals(IbvWC.IbvWcOpcode.IBV_WC_RECV.getOpcode(), wc.getOpcode());
        assertEquals(3000, wc.getByte_len());
        assertPattern(server.buffer, 512, 3000, 21);
    }

    @Test
    void sendWithImmediateAndRepliesBothWays() throws IOException {
        connect(false, false);
        server.postRecv(1, 0, 64);
        fill(client.buffer, 0, 64, 1);
        client.post(IbvSendWR.IBV_WR_SEND_WITH_IMM, 10, 0, 64, 0, 0, 42);
        client.awaitSuccess("SEND_WITH_IMM");
        IbvWC got = server.awaitSuccess("RECV");
        assertEquals(42, got.getImm_data());
        assertPattern(server.buffer, 0, 64, 1);
        client.postRecv(2, 1024, 64);
        fill(server.buffer, 4096, 64, 2);
        server.post(IbvSendWR.IBV_WR_SEND, 11, 4096, 64, 0, 0, 0);
        server.awaitSuccess("SEND");
        assertEquals(64, client.awaitSuccess("RECV").getByte_len());
        assertPattern(client.buffer, 1024, 64, 2);
    }

    @Test
    void completionsArriveThroughTheCompletionChannelOnBothSides() throws IOException {
        connect(true, true);
        for (int round = 0; round < 20; round++) {
            server.postRecv(100 + round, 0, 256);
            fill(client.buffer, 0, 256, round);
            client.post(IbvSendWR.IBV_WR_SEND, round, 0, 256, 0, 0, 0);
            assertEquals(round, client.awaitSuccess("SEND").getWr_id());
            assertEquals(100 + round, server.awaitSuccess("RECV").getWr_id());
            assertPattern(server.buffer, 0, 256, round);
            client.post(IbvSendWR.IBV_WR_RDMA_READ, 1000 + round, 1024, 256, server.mr.getAddr(), server.mr.getRkey(), 0);
            assertEquals(1000 + round, client.awaitSuccess("RDMA_READ").getWr_id());
            assertPattern(client.buffer, 1024, 256, round);
        }
    }

    @Test
    void manyOutstandingWritesAllCompleteByPolling() throws IOException {
        connect(false, false);
        int count = 48;
        for (int i = 0; i < count; i++) {
            fill(client.buffer, i * 1024, 1024, i);
            client.post(IbvSendWR.IBV_WR_RDMA_WRITE, i, i * 1024, 1024, server.mr.getAddr() + i * 1024L,
                    server.mr.getRkey(), 0);
        }
        for (int i = 0; i < count; i++) {
            assertEquals(i, client.awaitSuccess("RDMA_WRITE").getWr_id(), "RC completes in order");
        }
        for (int i = 0; i < count; i++) {
            assertPattern(server.buffer, i * 1024, 1024, i);
        }
    }
}
