package io.fabricrpc.transport.rdma.spi;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.ibm.disni.RdmaActiveEndpointGroup;
import com.ibm.disni.RdmaServerEndpoint;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmId;
import io.fabricrpc.transport.rdma.RdmaTestSupport;
import io.fabricrpc.transport.rdma.endpoint.BoundedConnectEndpoint;
import io.fabricrpc.transport.rdma.nativelib.DisniNativeLibrary;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

/** Closing the transport's endpoint group while its CM thread dispatches a connection request, on real verbs. */
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class QpEndpointGroupTest {
    @Test
    void closingWhileAConnectionRequestIsInDispatchReturns() throws Exception {
        DisniNativeLibrary.load();
        QpEndpointGroup group = new QpEndpointGroup(100, 4, 1, 16);
        group.init((id, serverSide) -> new QpEndpoint(group, id, serverSide));
        RdmaServerEndpoint<QpEndpoint> listener = group.createServerEndpoint();
        InetSocketAddress address = RdmaTestSupport.nextAddress();
        listener.bind(address, 4);
        RdmaActiveEndpointGroup<Client> clients = new RdmaActiveEndpointGroup<>(100, false, 4, 1, 16);
        clients.init((id, serverSide) -> new Client(clients, id, serverSide));
        Client client = clients.createEndpoint();
        Thread connecting = Thread.ofPlatform().daemon().start(() -> {
            try {
                client.connect(address, 20_000); // never accepted: ends when the listener goes or at the deadline
            } catch (Exception expected) {
                // the outcome of the connect is not what this test checks
            }
        });
        AtomicReference<Throwable> closeFailure = new AtomicReference<>();
        Thread closing;
        // Holding the listener's monitor parks the CM thread in its dispatch of the CONNECT_REQUEST, the event
        // already taken; DiSNI's own close then waited for that thread while holding the monitor it needs next.
        synchronized (listener) {
            awaitThreadBlockedIn("RdmaServerEndpoint", "dispatchCmEvent");
            closing = Thread.ofPlatform().daemon().start(() -> {
                try {
                    group.close();
                } catch (Throwable t) {
                    closeFailure.set(t);
                }
            });
            Thread.sleep(300);
        }
        closing.join(30_000);
        try {
            assertFalse(closing.isAlive(), () -> "the group's close deadlocked:\n" + threadDump());
            assertNull(closeFailure.get(), () -> "close failed: " + closeFailure.get());
            assertTrue(group.isClosed(), "the group is not marked closed");
        } finally {
            connecting.interrupt();
            connecting.join(30_000);
            client.close();
            clients.close();
        }
    }

    private static void awaitThreadBlockedIn(String className, String method) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline) {
            for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
                if (e.getKey().getState() == Thread.State.BLOCKED && Arrays.stream(e.getValue()).anyMatch(
                        f -> f.getClassName().endsWith(className) && f.getMethodName().equals(method))) {
                    return;
                }
            }
            Thread.sleep(20);
        }
        fail("no thread blocked in " + className + "." + method + " within 30 s:\n" + threadDump());
    }

    private static String threadDump() {
        return Thread.getAllStackTraces().entrySet().stream()
                .map(e -> e.getKey().getName() + " " + e.getKey().getState() + "\n  " + Arrays.stream(e.getValue())
                        .limit(12).map(String::valueOf).collect(Collectors.joining("\n  ")))
                .collect(Collectors.joining("\n"));
    }

    private static final class Client extends BoundedConnectEndpoint {
        Client(RdmaActiveEndpointGroup<Client> group, RdmaCmId id, boolean serverSide) throws IOException {
            super(group, id, serverSide);
        }

        @Override
        public void dispatchCqEvent(IbvWC wc) {
        }
    }
}
