package io.fabricrpc.transport.rdma.endpoint;

import static io.fabricrpc.transport.rdma.verbs.VerbsTestData.assertPattern;
import static io.fabricrpc.transport.rdma.verbs.VerbsTestData.fill;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.ibm.disni.RdmaActiveEndpointGroup;
import com.ibm.disni.RdmaServerEndpoint;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvWC;
import io.fabricrpc.transport.rdma.RdmaTestSupport;
import io.fabricrpc.transport.rdma.nativelib.DisniNativeLibrary;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * DiSNI's endpoint API (RdmaActiveEndpointGroup, RdmaServerEndpoint, RdmaActiveEndpoint) over this project's
 * libdisni, both ends in this JVM with separate groups; CQ threads in polling and in blocking (event) mode.
 */
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class EndpointApiTest {
    private RdmaActiveEndpointGroup<TestEndpoint> serverGroup;
    private RdmaActiveEndpointGroup<TestEndpoint> clientGroup;
    private RdmaServerEndpoint<TestEndpoint> listener;
    private TestEndpoint client;
    private TestEndpoint server;

    static RdmaActiveEndpointGroup<TestEndpoint> group(boolean polling) throws Exception {
        DisniNativeLibrary.load();
        RdmaActiveEndpointGroup<TestEndpoint> group = new RdmaActiveEndpointGroup<>(200, polling, 64, 4, 256);
        group.init((id, serverSide) -> new TestEndpoint(group, id, serverSide));
        group.getConnParam().setRnr_retry_count((byte) 7);
        return group;
    }

    private void connect(boolean polling) throws Exception {
        serverGroup = group(polling);
        clientGroup = group(polling);
        InetSocketAddress address = RdmaTestSupport.nextAddress();
        listener = serverGroup.createServerEndpoint();
        listener.bind(address, 8);
        CompletableFuture<TestEndpoint> accepted = CompletableFuture.supplyAsync(() -> {
            try {
                return listener.accept();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        client = clientGroup.createEndpoint();
        client.connect(address, 2000);
        server = accepted.get(20, TimeUnit.SECONDS);
        client.register();
        server.register();
    }

    @AfterEach
    void close() throws Exception {
        if (client != null) {
            client.close();
        }
        if (server != null) {
            server.close();
        }
        if (listener != null) {
            listener.close();
        }
        if (clientGroup != null) {
            clientGroup.close();
        }
        if (serverGroup != null) {
            serverGroup.close();
        }
    }

    @ParameterizedTest(name = "polling={0}")
    @ValueSource(booleans = {true, false})
    void writeReadSendAndWriteWithImmediate(boolean polling) throws Exception {
        connect(polling);
        assertTrue(client.isConnected());
        assertEquals(listener.getSrcAddr(), client.getDstAddr());

        fill(client.buffer, 0, 8192, 1);
        client.post(IbvSendWR.IBV_WR_RDMA_WRITE, 1, 0, 8192, server.mr().getAddr(), server.mr().getRkey(), 0);
        assertEquals(1, client.await("RDMA_WRITE").getWr_id());
        assertPattern(server.buffer, 0, 8192, 1);

        fill(server.buffer, 16384, 4096, 2);
        client.post(IbvSendWR.IBV_WR_RDMA_READ, 2, 8192, 4096, server.mr().getAddr() + 16384, server.mr().getRkey(), 0);
        client.await("RDMA_READ");
        assertPattern(client.buffer, 8192, 4096, 2);

        server.postRecv(3, 32768, 2048);
        fill(client.buffer, 20000, 2000, 3);
        client.post(IbvSendWR.IBV_WR_SEND, 4, 20000, 2000, 0, 0, 0);
        client.await("SEND");
        IbvWC recv = server.await("RECV");
        assertEquals(2000, recv.getByte_len());
        assertPattern(server.buffer, 32768, 2000, 3);

        server.postRecv(5, 0, 0);
        fill(client.buffer, 40000, 1000, 4);
        client.post(IbvSendWR.IBV_WR_RDMA_WRITE_WITH_IMM, 6, 40000, 1000, server.mr().getAddr() + 50000,
                server.mr().getRkey(), 0xCAFE);
        client.await("RDMA_WRITE_WITH_IMM");
        IbvWC imm = server.await("RECV");
        assertEquals(IbvWC.IbvWcOpcode.IBV_WC_RECV_RDMA_WITH_IMM.getOpcode(), imm.getOpcode());
        assertEquals(0xCAFE, imm.getImm_data());
        assertPattern(server.buffer, 50000, 1000, 4);

        // and the other direction
        client.postRecv(7, 0, 64);
        fill(server.buffer, 60000, 64, 5);
        server.post(IbvSendWR.IBV_WR_SEND, 8, 60000, 64, 0, 0, 0);
        server.await("SEND");
        client.await("RECV");
        assertPattern(client.buffer, 0, 64, 5);
    }
}
