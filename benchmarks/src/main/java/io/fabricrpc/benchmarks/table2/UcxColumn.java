package io.fabricrpc.benchmarks.table2;

import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.openucx.jucx.UcxException;
import org.openucx.jucx.ucp.UcpAmData;
import org.openucx.jucx.ucp.UcpConstants;
import org.openucx.jucx.ucp.UcpContext;
import org.openucx.jucx.ucp.UcpEndpoint;
import org.openucx.jucx.ucp.UcpEndpointParams;
import org.openucx.jucx.ucp.UcpParams;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpRequestParams;
import org.openucx.jucx.ucp.UcpWorker;
import org.openucx.jucx.ucp.UcpWorkerParams;
import org.openucx.jucx.ucs.UcsConstants;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.fabricrpc.benchmarks.table2.Table2FileDescriptor.*;

/**
 * The {@code ucx} baseline: the same longs as the calls, sent as OpenUCX active messages through JUCX, as a JUCX
 * user runs them. Rank 1 creates a UCP worker with an AM handler that sums each message's longs into
 * {@link Payloads.Sink} (as {@code raw} does) and publishes its worker address in the control block; rank 0 sends
 * one {@code ucp_am_send_nbx} per message from a ring of staging slots, as many as fit the stream's memory (the raw
 * ring's capacity). Invariants: a slot is rewritten only once the request that sent it has completed (at most one
 * request in flight per slot); each side progresses only its own worker on its measuring thread; every buffer UCX
 * reads stays reachable from a field; at close, no request is left outstanding when a worker is destroyed (rank 0
 * completes or cancels them, closes its endpoint, then tells rank 1, which progresses its worker until then).
 * Transports: the UCX environment the benchmark gives the ranks ({@link #environment}).
 */
final class UcxColumn implements Column {
    static final String NAME = "ucx";
    static final int SLOT_BYTES = 256;
    /** Sends between two progress calls of the sender's worker. */
    static final int PROGRESS_EVERY = 64;
    private static final int AM_ID = 0;
    private static final long CLOSE_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final boolean sender;
    private final UnsafeBuffer control;
    private final long timeoutNanos;
    private final IdleStrategy idle = RawRingColumn.newIdleStrategy();
    private final UcpContext context;
    private final UcpWorker worker;
    // JUCX 1.16 on UCX 1.13: without an explicit memory type UCX rejects the request ("invalid memory type").
    private final UcpRequestParams hostMemory = new UcpRequestParams()
            .setMemoryType(UcsConstants.MEMORY_TYPE.UCS_MEMORY_TYPE_HOST);
    /** Rank 0: the staging slots, the peer's address and the request of each slot not known to be complete. */
    private final ByteBuffer staging;
    private final UnsafeBuffer slots;
    private final ByteBuffer peerAddress;
    private final int window;
    private final UcpRequest[] inFlight;
    private UcpEndpoint endpoint;
    private long sent;
    /** Every slot of a message before this one is free (null). */
    private long oldestInFlight;
    private int lastPayloadBytes;
    /** Rank 1: the handler's view of a message and how many messages it ran; a failure inside it, for poll(). */
    private final UnsafeBuffer message = new UnsafeBuffer(0, 0);
    private long handled;
    private Throwable handlerFailure;

    /** @param streamBytes the staging memory of the sender (a multiple of {@link #SLOT_BYTES}) */
    UcxColumn(boolean sender, UnsafeBuffer control, int streamBytes, long timeoutMillis) {
        this.sender = sender;
        this.window = sender ? Math.max(1, streamBytes / SLOT_BYTES) : 0;
        this.inFlight = new UcpRequest[window];
        this.control = control;
        this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        try {
            this.context = new UcpContext(new UcpParams().requestAmFeature().setEstimatedNumEps(1));
            this.worker = context.newWorker(new UcpWorkerParams());
        } catch (UcxException | UnsatisfiedLinkError e) {
            throw new IllegalStateException(NAME + ": cannot create a UCP context and worker (libucx installed? run"
                    + " scripts/install-ucx.sh; UCX_TLS=" + System.getenv("UCX_TLS") + "): " + e, e);
        }
        if (sender) {
            staging = ByteBuffer.allocateDirect(window * SLOT_BYTES);
            slots = new UnsafeBuffer(staging);
            peerAddress = awaitPeerAddress();
            endpoint = worker.newEndpoint(new UcpEndpointParams().setUcpAddress(peerAddress).setName("table2-ucx"));
        } else {
            staging = null;
            slots = null;
            peerAddress = null;
            worker.setAmRecvHandler(AM_ID, this::onReceive, UcpConstants.UCP_AM_FLAG_WHOLE_MSG);
            publishAddress(worker.getAddress());
        }
    }

    /**
     * The UCX variables the ranks need over {@code transport}, each unless {@code inherited} already sets it: UCX's
     * shared-memory transports under shm; under rdma RC and UD verbs on port 1 of {@code device} with GID index 0
     * (UCX's own choice, index 1 under rxe, timed out between two processes of one guest).
     */
    static Map<String, String> environment(String transport, String device, Map<String, String> inherited) {
        Map<String, String> wanted = new LinkedHashMap<>();
        if (transport.equals("shm")) {
            wanted.put("UCX_TLS", "posix,sysv,cma,self");
        } else {
            wanted.put("UCX_TLS", "rc_verbs,ud_verbs,self");
            wanted.put("UCX_NET_DEVICES", device + ":1");
            wanted.put("UCX_IB_GID_INDEX", "0");
        }
        wanted.put("UCX_WARN_UNUSED_ENV_VARS", "n");
        wanted.keySet().removeIf(inherited::containsKey);
        return wanted;
    }

    /** Null when libucp is in one of the usual library directories, else why the column cannot run. */
    static String unavailableReason() {
        List<String> dirs = new ArrayList<>(List.of("/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64",
                "/usr/lib", "/usr/local/lib"));
        String extra = System.getenv("LD_LIBRARY_PATH");
        if (extra != null && !extra.isEmpty()) {
            dirs.addAll(0, List.of(extra.split(":")));
        }
        for (String dir : dirs) {
            if (Files.exists(Path.of(dir, "libucp.so.0"))) {
                return null;
            }
        }
        return "libucp.so.0 (OpenUCX) is in none of " + dirs + "; install it with scripts/install-ucx.sh";
    }

    private void publishAddress(ByteBuffer address) {
        int length = address.remaining();
        if (length > UCX_ADDRESS_MAX) {
            throw new IllegalStateException(NAME + ": the UCP worker address takes " + length + " B, the control block"
                    + " holds " + UCX_ADDRESS_MAX + " (narrow UCX_TLS)");
        }
        control.putBytes(UCX_EXCHANGE_OFFSET + UCX_ADDRESS, address, address.position(), length);
        control.putInt(UCX_EXCHANGE_OFFSET + UCX_ADDRESS_LENGTH, length);
        control.putLongRelease(UCX_EXCHANGE_OFFSET + UCX_PUBLISHED, 1); // release: the address is written first
    }

    private ByteBuffer awaitPeerAddress() {
        long start = System.nanoTime();
        idle.reset();
        while (control.getLongAcquire(UCX_EXCHANGE_OFFSET + UCX_PUBLISHED) != 1) { // pairs with publishAddress
            if (System.nanoTime() - start > timeoutNanos) {
                throw new IllegalStateException(NAME + ": rank 1 published no UCP worker address within "
                        + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms");
            }
            idle.idle();
        }
        int length = control.getInt(UCX_EXCHANGE_OFFSET + UCX_ADDRESS_LENGTH);
        if (length <= 0 || length > UCX_ADDRESS_MAX) {
            throw new IllegalStateException(NAME + ": rank 1's worker address length is " + length + ", expected 1.."
                    + UCX_ADDRESS_MAX);
        }
        ByteBuffer address = ByteBuffer.allocateDirect(length); // direct: JUCX passes its address to UCX
        control.getBytes(UCX_EXCHANGE_OFFSET + UCX_ADDRESS, address, length);
        return address.flip();
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public long sendUntil(int payloadBytes, long first, long deadlineNanos) {
        int longs = Payloads.checkedLongs(payloadBytes);
        lastPayloadBytes = payloadBytes;
        long base = slots.addressOffset();
        long i = first;
        do {
            for (int b = 0; b < FabricColumn.BATCH; b++, i++) {
                int slot = (int) (sent % window);
                if (inFlight[slot] != null) {
                    awaitCompleted(slot, i, payloadBytes);
                }
                int at = slot * SLOT_BYTES;
                for (int j = 0; j < longs; j++) {
                    slots.putLong(at + j * Long.BYTES, i + j);
                }
                UcpRequest request;
                try {
                    request = endpoint.sendAmNonBlocking(AM_ID, 0, 0, base + at, payloadBytes, 0, null, hostMemory);
                } catch (UcxException e) {
                    throw new IllegalStateException(NAME + ": message " + i + " of " + payloadBytes + " B refused: " + e,
                            e);
                }
                if (request.isCompleted()) {
                    checkStatus(request, i + 1, payloadBytes);
                    inFlight[slot] = null;
                } else {
                    inFlight[slot] = request;
                }
                // Often enough that a send seldom finds UCX's queue full (shm: a 256-element FIFO) and takes its
                // pending path: progressing once per 256 sends ran at a third of the rate on this machine.
                if (++sent % PROGRESS_EVERY == 0) {
                    progress();
                }
            }
        } while (System.nanoTime() - deadlineNanos < 0);
        return i - first;
    }

    /** Progresses the worker until the request of {@code slot} completes (bounded), then frees the slot. */
    private void awaitCompleted(int slot, long i, int payloadBytes) {
        UcpRequest request = inFlight[slot];
        long start = System.nanoTime();
        idle.reset();
        while (!request.isCompleted()) {
            if (System.nanoTime() - start > timeoutNanos) {
                throw new IllegalStateException(NAME + ", " + payloadBytes + " B: the send of slot " + slot
                        + " (before message " + i + ", " + sent + " sent) did not complete for "
                        + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms (" + window + " slots)");
            }
            if (progress() == 0) {
                idle.idle();
            }
        }
        inFlight[slot] = null;
        checkStatus(request, i, payloadBytes);
    }

    private static void checkStatus(UcpRequest request, long i, int payloadBytes) {
        if (request.getStatus() != UcsConstants.STATUS.UCS_OK) {
            throw new IllegalStateException(NAME + ", " + payloadBytes + " B: a send before message " + i
                    + " completed with UCX status " + request.getStatus());
        }
    }

    private int progress() {
        try {
            return worker.progress();
        } catch (Exception e) {
            throw new IllegalStateException(NAME + ": worker progress failed: " + e, e);
        }
    }

    /** Completes every request still in flight: a queued message leaves the sender only through its progress. */
    @Override
    public void flush() {
        for (long k = Math.max(oldestInFlight, sent - window); k < sent; k++) { // oldest first
            int slot = (int) (k % window);
            if (inFlight[slot] != null) {
                awaitCompleted(slot, sent, lastPayloadBytes);
            }
        }
        oldestInFlight = sent;
    }

    @Override
    public int poll() {
        long before = handled;
        progress();
        if (handlerFailure != null) {
            throw new IllegalStateException(NAME + ": the AM handler failed after " + handled + " messages: "
                    + handlerFailure, handlerFailure);
        }
        return (int) (handled - before);
    }

    /** Runs inside worker.progress() on the receiving thread; never throws into UCX. */
    private int onReceive(long headerAddress, long headerSize, UcpAmData data, UcpEndpoint replyEndpoint) {
        try {
            if (!data.isDataValid()) {
                // Messages of 8..256 B go eager; rendezvous would need a receive request, which a baseline skips.
                throw new IllegalStateException("message " + (handled + 1) + " of " + data.getLength()
                        + " B arrived by rendezvous");
            }
            message.wrap(data.getDataAddress(), (int) data.getLength());
            Payloads.takeLongs(message, 0, (int) data.getLength());
            handled++;
        } catch (Throwable t) {
            if (handlerFailure == null) {
                handlerFailure = t;
            }
        }
        return UcsConstants.STATUS.UCS_OK; // the data is consumed: UCX may reuse its buffer
    }

    /**
     * Tears down in the order UCX needs: every send request completed (or cancelled) and the endpoint closed before
     * rank 0's worker goes; rank 1's worker lives, progressing, until rank 0 says its endpoint is closed, so that the
     * disconnect completes on both sides. Each wait is bounded; a failure here is printed, never thrown.
     */
    @Override
    public void close() {
        try {
            if (sender) {
                releaseRequests();
                closeEndpoint();
                control.putLongRelease(UCX_EXCHANGE_OFFSET + UCX_SENDER_CLOSED, 1); // after the endpoint is gone
            } else {
                long start = System.nanoTime();
                while (control.getLongAcquire(UCX_EXCHANGE_OFFSET + UCX_SENDER_CLOSED) != 1 // pairs with rank 0's
                        && System.nanoTime() - start < timeoutNanos) { // rank 0 may have died
                    if (progressQuietly() == 0) {
                        Thread.onSpinWait();
                    }
                }
            }
        } catch (RuntimeException e) {
            System.out.println(NAME + ": teardown before closing the worker failed: " + e);
        } finally {
            worker.close();
            context.close();
        }
    }

    /** Rank 0: every request still in flight (after a failed run) completes, or is cancelled and then completes. */
    private void releaseRequests() {
        for (int slot = 0; slot < window; slot++) {
            UcpRequest request = inFlight[slot];
            if (request != null) {
                awaitOrCancel(request, "send of slot " + slot);
                inFlight[slot] = null;
            }
        }
    }

    private void closeEndpoint() {
        if (endpoint == null) {
            return;
        }
        // Force needs the peer error-handling mode (UCX: "Invalid parameter"); every send completed above.
        UcpRequest closing = endpoint.closeNonBlockingFlush();
        awaitOrCancel(closing, "endpoint close");
        endpoint = null;
    }

    /** Progresses until {@code request} completes; past the bound, cancels it and progresses until it does. */
    private void awaitOrCancel(UcpRequest request, String what) {
        if (awaitQuietly(request)) {
            return;
        }
        System.out.println(NAME + ": " + what + " still pending after " + TimeUnit.NANOSECONDS.toMillis(CLOSE_NANOS)
                + " ms: cancelling it");
        worker.cancelRequest(request);
        if (!awaitQuietly(request)) {
            System.out.println(NAME + ": " + what + " did not complete even when cancelled");
        }
    }

    private boolean awaitQuietly(UcpRequest request) {
        long start = System.nanoTime();
        while (!request.isCompleted() && System.nanoTime() - start < CLOSE_NANOS) {
            if (progressQuietly() == 0) {
                Thread.onSpinWait();
            }
        }
        return request.isCompleted();
    }

    /** Teardown's progress: a failure is printed once per call, not thrown (the worker must still be closed). */
    private int progressQuietly() {
        try {
            return worker.progress();
        } catch (Exception e) {
            System.out.println(NAME + ": worker progress failed during teardown: " + e);
            return 0;
        }
    }

    /**
     * The version of the libucp this JVM loads, as UCX reports it ({@code ucp_get_version_string}), or why it is
     * unknown. JUCX 1.16 asks for UCX 1.16 or later; an older library still runs this column, with a warning.
     */
    static String libraryVersion() {
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
            java.lang.foreign.Linker linker = java.lang.foreign.Linker.nativeLinker();
            java.lang.foreign.SymbolLookup ucp = java.lang.foreign.SymbolLookup.libraryLookup("libucp.so.0", arena);
            java.lang.invoke.MethodHandle version = linker.downcallHandle(
                    ucp.find("ucp_get_version_string").orElseThrow(),
                    java.lang.foreign.FunctionDescriptor.of(java.lang.foreign.ValueLayout.ADDRESS));
            java.lang.foreign.MemorySegment text = (java.lang.foreign.MemorySegment) version.invokeExact();
            return text.reinterpret(64).getString(0);
        } catch (Throwable t) {
            return "unknown (" + t + ")";
        }
    }

    @Override
    public String toString() {
        return NAME + " (UCX active messages through JUCX, " + window + " staging slots, UCX_TLS="
                + System.getenv("UCX_TLS") + ")";
    }
}
