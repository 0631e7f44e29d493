package io.fabricrpc.benchmarks.table2;

import com.ibm.darpc.DaRPCClientEndpoint;
import com.ibm.darpc.DaRPCClientGroup;
import com.ibm.darpc.DaRPCFuture;
import com.ibm.darpc.DaRPCMessage;
import com.ibm.darpc.DaRPCProtocol;
import com.ibm.darpc.DaRPCServerEndpoint;
import com.ibm.darpc.DaRPCServerEvent;
import com.ibm.darpc.DaRPCServerGroup;
import com.ibm.darpc.DaRPCService;
import com.ibm.darpc.DaRPCStream;
import com.ibm.disni.RdmaServerEndpoint;
import io.fabricrpc.transport.rdma.nativelib.DisniNativeLibrary;
import io.fabricrpc.transport.rdma.spi.RdmaTransport;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The RPC baseline of the RDMA Table 2: DaRPC 1.9 (IBM's RDMA RPC library over DiSNI 2.1, here on this project's
 * libdisni) carrying the same longs as the calls between two JVMs. The server sums the request's longs (the calls'
 * body) and answers with the sum; the client keeps {@code depth} requests in flight on one stream and counts
 * completed calls per second.
 *
 * <p>{@code DarpcBaseline server ADDRESS PORT INLINE POLLING}: serves until killed.
 * {@code DarpcBaseline client ADDRESS PORT INLINE DEPTH}: connects, prints {@value #READY}, then for every stdin line
 * {@code run SIZE SECONDS} prints {@code DARPC SIZE CALLS NANOS} (every response checked against the expected sum);
 * {@code quit} ends it. Any failure exits 1 with the offending values.
 */
public final class DarpcBaseline {
    static final String READY = "DARPC READY";
    static final String RESULT = "DARPC";
    private static final int MAX_LONGS = 32;
    private static final int TIMEOUT_MS = 10_000;

    private DarpcBaseline() {
    }

    /** A request: the number of longs, then the longs (the captured values of one call). */
    static final class Request implements DaRPCMessage {
        final long[] longs = new long[MAX_LONGS];
        int count;

        @Override
        public int write(ByteBuffer buffer) {
            buffer.putInt(count);
            for (int i = 0; i < count; i++) {
                buffer.putLong(longs[i]);
            }
            return Integer.BYTES + count * Long.BYTES;
        }

        @Override
        public void update(ByteBuffer buffer) throws IOException {
            int n = buffer.getInt();
            if (n < 0 || n > MAX_LONGS) {
                throw new IOException("DaRPC request carries " + n + " longs, at most " + MAX_LONGS);
            }
            count = n;
            for (int i = 0; i < n; i++) {
                longs[i] = buffer.getLong();
            }
        }

        @Override
        public int size() {
            return Integer.BYTES + MAX_LONGS * Long.BYTES;
        }
    }

    /** A response: the sum of the request's longs. */
    static final class Response implements DaRPCMessage {
        long sum;

        @Override
        public int write(ByteBuffer buffer) {
            buffer.putLong(sum);
            return Long.BYTES;
        }

        @Override
        public void update(ByteBuffer buffer) {
            sum = buffer.getLong();
        }

        @Override
        public int size() {
            return Long.BYTES;
        }
    }

    static class Protocol implements DaRPCProtocol<Request, Response> {
        @Override
        public Request createRequest() {
            return new Request();
        }

        @Override
        public Response createResponse() {
            return new Response();
        }
    }

    static final class Service extends Protocol implements DaRPCService<Request, Response> {
        @Override
        public void processServerEvent(DaRPCServerEvent<Request, Response> event) throws IOException {
            Request request = event.getReceiveMessage();
            long sum = 0;
            for (int i = 0; i < request.count; i++) {
                sum += request.longs[i];
            }
            event.getSendMessage().sum = sum;
            event.triggerResponse();
        }

        @Override
        public void open(DaRPCServerEndpoint<Request, Response> endpoint) {
        }

        @Override
        public void close(DaRPCServerEndpoint<Request, Response> endpoint) {
        }
    }

    public static void main(String[] args) {
        int exit = 0;
        try {
            DisniNativeLibrary.load();
            InetSocketAddress address = new InetSocketAddress(args[1], Integer.parseInt(args[2]));
            int inline = Integer.parseInt(args[3]);
            if (args[0].equals("server")) {
                serve(address, inline, Boolean.parseBoolean(args[4]));
            } else {
                client(address, inline, Integer.parseInt(args[4]));
            }
        } catch (Throwable t) {
            System.out.println("DaRPC " + String.join(" ", args) + " failed: " + t);
            t.printStackTrace(System.out);
            exit = 1;
        }
        System.out.flush();
        Runtime.getRuntime().halt(exit); // DiSNI's CM and cluster threads are not daemons
    }

    private static void serve(InetSocketAddress address, int inline, boolean polling) throws Exception {
        int cpus = Runtime.getRuntime().availableProcessors();
        long[] affinities = {(1L << cpus) - 1}; // one cluster thread, free to run on any CPU
        DaRPCServerGroup<Request, Response> group = DaRPCServerGroup.createServerGroup(new Service(), affinities,
                TIMEOUT_MS, inline, polling, 128, 128, 1, 1);
        RdmaTransport.applyConnectionRetries(group); // as the fabric's QPs: one dropped packet is retried
        RdmaServerEndpoint<DaRPCServerEndpoint<Request, Response>> server = group.createServerEndpoint();
        server.bind(address, 16);
        System.out.println(READY);
        System.out.flush();
        while (true) {
            server.accept();
        }
    }

    private static void client(InetSocketAddress address, int inline, int depth) throws Exception {
        DaRPCClientGroup<Request, Response> group = DaRPCClientGroup.createClientGroup(new Protocol(), TIMEOUT_MS,
                inline, 2 * depth, 2 * depth);
        RdmaTransport.applyConnectionRetries(group); // as the fabric's QPs: one dropped packet is retried
        DaRPCClientEndpoint<Request, Response> endpoint = group.createEndpoint();
        endpoint.connect(address, TIMEOUT_MS);
        DaRPCStream<Request, Response> stream = endpoint.createStream();
        Request[] requests = new Request[depth];
        Response[] responses = new Response[depth];
        for (int i = 0; i < depth; i++) {
            requests[i] = new Request();
            responses[i] = new Response();
        }
        System.out.println(READY);
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        long next = 0;
        String line;
        while ((line = in.readLine()) != null && !line.equals("quit")) {
            String[] f = line.trim().split("\\s+");
            if (f.length != 3 || !f[0].equals("run")) {
                throw new IllegalArgumentException("expected 'run SIZE SECONDS' or 'quit', got '" + line + "'");
            }
            int size = Integer.parseInt(f[1]);
            long nanos = (long) (Double.parseDouble(f[2]) * 1e9);
            long[] outcome = run(stream, requests, responses, Payloads.longs(size), next, nanos);
            next += outcome[0];
            System.out.printf(Locale.ROOT, "%s %d %d %d%n", RESULT, size, outcome[0], outcome[1]);
            System.out.flush();
        }
    }

    /** Calls {@code first, first+1, ...} with {@code depth} in flight for {@code nanos}; {calls, elapsed nanos}. */
    private static long[] run(DaRPCStream<Request, Response> stream, Request[] requests, Response[] responses,
                              int longs, long first, long nanos) throws IOException {
        int depth = requests.length;
        long[] callOf = new long[depth];
        long issued = 0;
        long done = 0;
        long start = System.nanoTime();
        long deadline = start + nanos;
        for (int slot = 0; slot < depth; slot++) {
            issue(stream, requests[slot], responses[slot], longs, first + issued);
            callOf[slot] = first + issued++;
        }
        long lastProgress = System.nanoTime();
        while (done < issued) {
            DaRPCFuture<Request, Response> future = stream.poll();
            if (future == null) {
                if (System.nanoTime() - lastProgress > TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS)) {
                    throw new IOException("DaRPC: no response for " + TIMEOUT_MS + " ms (" + done + " of " + issued
                            + " calls answered)");
                }
                continue;
            }
            lastProgress = System.nanoTime();
            int slot = indexOf(requests, future.getSendMessage());
            long expected = Payloads.expectedSum(longs * Long.BYTES, callOf[slot], 1);
            if (responses[slot].sum != expected) {
                throw new IOException("DaRPC: call " + callOf[slot] + " answered " + responses[slot].sum + ", expected "
                        + expected);
            }
            done++;
            if (System.nanoTime() - deadline < 0) {
                issue(stream, requests[slot], responses[slot], longs, first + issued);
                callOf[slot] = first + issued++;
            }
        }
        return new long[] {done, System.nanoTime() - start};
    }

    private static void issue(DaRPCStream<Request, Response> stream, Request request, Response response, int longs,
                              long call) throws IOException {
        request.count = longs;
        for (int j = 0; j < longs; j++) {
            request.longs[j] = call + j;
        }
        response.sum = Long.MIN_VALUE;
        stream.request(request, response, true);
    }

    private static int indexOf(Request[] requests, Request request) {
        for (int i = 0; i < requests.length; i++) {
            if (requests[i] == request) {
                return i;
            }
        }
        throw new IllegalStateException("DaRPC returned a future for a request this client never issued");
    }
}
