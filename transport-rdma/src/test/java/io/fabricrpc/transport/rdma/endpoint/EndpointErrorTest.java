package io.fabricrpc.transport.rdma.endpoint;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.ibm.disni.RdmaActiveEndpointGroup;
import io.fabricrpc.transport.rdma.RdmaTestSupport;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

/** Endpoint-API failures end in exceptions within their deadline (DiSNI's own connect would wait forever). */
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class EndpointErrorTest {

    @Test
    void connectingToAPortNobodyListensOnThrowsConnectException() throws Exception {
        RdmaActiveEndpointGroup<TestEndpoint> group = EndpointApiTest.group(true);
        try {
            InetSocketAddress nobody = RdmaTestSupport.nextAddress();
            TestEndpoint ep = group.createEndpoint();
            long start = System.nanoTime();
            ConnectException e = assertThrows(ConnectException.class, () -> ep.connect(nobody, 10_000));
            assertTrue(e.getMessage().contains(nobody.getAddress().getHostAddress()), e.getMessage());
            assertTrue(e.getMessage().contains("REJECTED") || e.getMessage().contains("UNREACHABLE")
                    || e.getMessage().contains("timed out"), e.getMessage());
            assertTrue(System.nanoTime() - start < 15_000_000_000L, "bounded by the timeout");
            ep.close();
        } finally {
            group.close();
        }
    }
}
