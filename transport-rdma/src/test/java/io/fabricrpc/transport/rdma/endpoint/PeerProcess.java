package io.fabricrpc.transport.rdma.endpoint;

import static io.fabricrpc.transport.rdma.verbs.VerbsTestData.fill;
import static io.fabricrpc.transport.rdma.RdmaTestSupport.patternByte;

import com.ibm.disni.RdmaActiveEndpointGroup;
import com.ibm.disni.RdmaServerEndpoint;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvWC;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * The server side of {@link TwoJvmTest}, run in its own JVM: {@code PeerProcess <address> <port> normal|die}.
 * Protocol (all on one connection): the server SENDs its buffer descriptor (address, rkey); the client RDMA WRITEs
 * {@link #DATA_LENGTH} bytes and signals with WRITE_WITH_IMM carrying the pattern seed; the server checks every
 * byte, fills its READ area with seed + 1 and SENDs back 1 (match) or 0; the client RDMA READs that area and
 * finally SENDs "bye". In {@code die} mode the server halts as soon as the client's first message arrives.
 * Exit status 0 means every byte matched.
 */
public final class PeerProcess {
    static final int DATA_LENGTH = 32 * 1024;
    static final int READ_OFFSET = DATA_LENGTH;
    static final int READ_LENGTH = 16 * 1024;
    static final int CTRL_IN = TestEndpoint.BUFFER_SIZE - 256;
    static final int CTRL_OUT = TestEndpoint.BUFFER_SIZE - 128;

    private PeerProcess() {
    }

    public static void main(String[] args) throws Exception {
        InetSocketAddress address = new InetSocketAddress(InetAddress.getByName(args[0]), Integer.parseInt(args[1]));
        boolean die = args.length > 2 && args[2].equals("die");
        RdmaActiveEndpointGroup<TestEndpoint> group = EndpointApiTest.group(false);
        RdmaServerEndpoint<TestEndpoint> listener = group.createServerEndpoint();
        listener.bind(address, 4);
        System.out.println("LISTENING " + address);
        System.out.flush();
        TestEndpoint ep = listener.accept();
        IbvMr mr = ep.register();
        ByteBuffer b = ep.buffer;
        ep.postRecv(1, CTRL_IN, 64);
        b.putLong(CTRL_OUT, mr.getAddr());
        b.putInt(CTRL_OUT + 8, mr.getRkey());
        ep.post(IbvSendWR.IBV_WR_SEND, 2, CTRL_OUT, 12, 0, 0, 0);
        ep.await("SEND");
        IbvWC first = ep.await("RECV");
        if (die) {
            System.out.println("HALTING mid-transfer");
            System.out.flush();
            Runtime.getRuntime().halt(3);
        }
        int seed = first.getImm_data();
        int mismatch = -1;
        for (int i = 0; i < DATA_LENGTH && mismatch < 0; i++) {
            if (b.get(i) != patternByte(seed, i)) {
                mismatch = i;
            }
        }
        System.out.println(mismatch < 0 ? "VERIFIED " + DATA_LENGTH + " bytes" : "MISMATCH at byte " + mismatch);
        fill(b, READ_OFFSET, READ_LENGTH, seed + 1);
        ep.postRecv(3, CTRL_IN, 64);
        b.putInt(CTRL_OUT, mismatch < 0 ? 1 : 0);
        ep.post(IbvSendWR.IBV_WR_SEND, 4, CTRL_OUT, 4, 0, 0, 0);
        ep.await("SEND");
        ep.await("RECV");
        ep.close();
        listener.close();
        group.close();
        System.out.println("DONE");
        System.out.flush();
        Runtime.getRuntime().halt(mismatch < 0 ? 0 : 1); // DiSNI's non-daemon threads may linger
    }
}
