package io.fabricrpc.transport.rdma.verbs;

import com.ibm.disni.verbs.IbvPd;
import java.nio.ByteBuffer;

/** Child JVM of {@link MemlockLimitTest}: registers 8 MiB and prints the outcome on one line. */
public final class MemlockProbe {
    private MemlockProbe() {
    }

    public static void main(String[] args) throws Exception {
        try (VerbsPeer anchor = VerbsPeer.listen(new java.net.InetSocketAddress(args[0], Integer.parseInt(args[1])), false)) {
            IbvPd pd = anchor.listenId.getVerbs().allocPd();
            try {
                pd.regMr(ByteBuffer.allocateDirect(8 << 20), VerbsPeer.ACCESS).execute().free();
                System.out.println("REGISTERED");
            } catch (java.io.IOException e) {
                System.out.println("FAILED " + e.getMessage());
            }
            pd.deallocPd();
        }
        Runtime.getRuntime().halt(0);
    }
}
