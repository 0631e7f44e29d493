package io.fabricrpc.transport.rdma.verbs;

import static io.fabricrpc.transport.rdma.verbs.VerbsTestData.fill;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.RdmaCmEvent;
import io.fabricrpc.transport.rdma.RdmaTestSupport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

/** Bad inputs through the raw verbs API: each ends in a clear Java exception, never a JVM crash or a hang. */
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class VerbsErrorTest {
    private static final int LOC_QP_OP_ERR = 2;
    private static final int LOC_PROT_ERR = 4;
    private static final int LOC_ACCESS_ERR = 8;
    private static final int REM_ACCESS_ERR = 10;

    private VerbsPeer server;
    private VerbsPeer client;

    private void connect() throws IOException {
        InetSocketAddress address = RdmaTestSupport.nextAddress();
        server = VerbsPeer.listen(address, false);
        client = VerbsPeer.connect(address, false);
        server.acceptNext();
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

    private static WorkCompletionException expectFailure(VerbsPeer peer, String operation) {
        WorkCompletionException e = assertThrows(WorkCompletionException.class, () -> peer.awaitSuccess(operation));
        assertEquals(operation, e.operation());
        assertTrue(e.getMessage().startsWith(operation + " (wr_id "), e.getMessage());
        return e;
    }

    @Test
    void wrongRkeyFailsTheWriteAndLeavesTheTargetUntouched() throws IOException {
        connect();
        fill(client.buffer, 0, 256, 1);
        client.post(IbvSendWR.IBV_WR_RDMA_WRITE, 5, 0, 256, server.mr.getAddr(), server.mr.getRkey() ^ 0x5a5a00, 0);
        WorkCompletionException e = expectFailure(client, "RDMA_WRITE");
        assertEquals(5, e.wrId());
        assertEquals(REM_ACCESS_ERR, e.status(), e.getMessage());
        assertTrue(e.getMessage().contains("REM_ACCESS_ERR"), e.getMessage());
        for (int i = 0; i < 256; i++) {
            assertEquals(0, server.buffer.get(i), "target byte " + i);
        }
    }

    @Test
    void outOfRangeRemoteAddressFailsTheRead() throws IOException {
        connect();
        client.post(IbvSendWR.IBV_WR_RDMA_READ, 6, 0, 64, server.mr.getAddr() + VerbsPeer.BUFFER_SIZE - 16,
                server.mr.getRkey(), 0);
        WorkCompletionException e = expectFailure(client, "RDMA_READ");
        assertEquals(REM_ACCESS_ERR, e.status(), e.getMessage());
    }

    @Test
    void writeFromDeregisteredLocalMemoryFails() throws IOException {
        connect();
        int staleLkey = client.mr.getLkey();
        client.mr.deregMr().execute().free();
        IOException twice = assertThrows(IOException.class, () -> client.mr.deregMr().execute().free());
        assertTrue(twice.getMessage().contains("closed memory region"), twice.getMessage());
        client.post(IbvSendWR.IBV_WR_RDMA_WRITE, 7, 0, 128, server.mr.getAddr(), server.mr.getRkey(), 0, staleLkey);
        WorkCompletionException e = expectFailure(client, "RDMA_WRITE");
        // Providers differ in which local error they report for an unknown lkey (rxe: LOC_QP_OP_ERR).
        assertTrue(Set.of(LOC_QP_OP_ERR, LOC_PROT_ERR, LOC_ACCESS_ERR).contains(e.status()), e.getMessage());
    }

    @Test
    void writeIntoDeregisteredRemoteMemoryFails() throws IOException {
        connect();
        server.mr.deregMr().execute().free();
        client.post(IbvSendWR.IBV_WR_RDMA_WRITE, 8, 0, 128, server.mr.getAddr(), server.mr.getRkey(), 0);
        WorkCompletionException e = expectFailure(client, "RDMA_WRITE");
        assertEquals(REM_ACCESS_ERR, e.status(), e.getMessage());
    }

    @Test
    void connectingToAPortNobodyListensOnIsRejected() throws IOException {
        client = VerbsPeer.connect(RdmaTestSupport.nextAddress(), false);
        RdmaCmEvent ev = client.nextEvent(VerbsPeer.TIMEOUT_MS);
        assertNotNull(ev, "no CM event within " + VerbsPeer.TIMEOUT_MS + " ms");
        RdmaCmEvent.EventType type = RdmaCmEvent.EventType.values()[ev.getEvent()];
        assertTrue(Set.of(RdmaCmEvent.EventType.RDMA_CM_EVENT_REJECTED, RdmaCmEvent.EventType.RDMA_CM_EVENT_UNREACHABLE,
                RdmaCmEvent.EventType.RDMA_CM_EVENT_CONNECT_ERROR).contains(type), type.toString());
    }

    @Test
    void postingAfterThePeerDisconnectedMidTransferFailsWithACompletionError() throws IOException {
        connect();
        for (int i = 0; i < 8; i++) {
            client.post(IbvSendWR.IBV_WR_RDMA_WRITE, i, 0, 4096, server.mr.getAddr(), server.mr.getRkey(), 0);
        }
        long remoteAddress = server.mr.getAddr();
        int rkey = server.mr.getRkey();
        server.close(); // disconnects and destroys its QP while the writes are in flight
        server = null;
        long deadline = System.nanoTime() + 30_000_000_000L;
        WorkCompletionException failure = null;
        long wrId = 100;
        while (failure == null && System.nanoTime() < deadline) {
            client.nextEvent(1); // lets librdmacm see DISCONNECTED and move the QP to the error state
            try {
                client.awaitSuccess("RDMA_WRITE");
                client.post(IbvSendWR.IBV_WR_RDMA_WRITE, wrId++, 0, 4096, remoteAddress, rkey, 0);
            } catch (WorkCompletionException e) {
                failure = e;
            }
        }
        assertNotNull(failure, "writes to a vanished peer kept succeeding for 30 s");
        assertEquals("RDMA_WRITE", failure.operation());
    }
}
