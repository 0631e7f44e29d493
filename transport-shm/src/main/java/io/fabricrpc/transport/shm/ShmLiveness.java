package io.fabricrpc.transport.shm;

import java.lang.foreign.MemorySegment;

/**
 * The body of an endpoint's liveness thread: beats the endpoint file's heartbeat, lets each link judge its peer
 * (dead process, stalled heartbeat, closed endpoint), and every {@value #FILE_CHECK_MILLIS} ms looks for mapped files
 * cut short ({@link ShmTransport#faulted}). Writes only the heartbeat word of its own endpoint file; links and
 * the transport record what it finds. Survives every Throwable, reporting those no cut file explains.
 */
final class ShmLiveness implements Runnable {
    /** How often the liveness thread checks that no mapped file was cut short (a stat per mapped file). */
    static final long FILE_CHECK_MILLIS = 250;
    private static final long REPORT_PERIOD_MILLIS = 10_000;

    private final ShmTransport transport;
    private final MemorySegment endpointFile;
    private final long heartbeatMillis;
    private final long peerTimeoutMillis;

    ShmLiveness(ShmTransport transport, MemorySegment endpointFile, long heartbeatMillis, long peerTimeoutMillis) {
        this.transport = transport;
        this.endpointFile = endpointFile;
        this.heartbeatMillis = heartbeatMillis;
        this.peerTimeoutMillis = peerTimeoutMillis;
    }

    @Override
    public void run() {
        long lastReport = 0;
        long nextFileCheck = 0;
        while (!transport.isClosed()) {
            long now = System.currentTimeMillis();
            // Everything, the sleep included, inside the try: HotSpot raises a fault in compiled code at a later
            // safepoint poll, which may be the sleep's, and the loop must survive it wherever it surfaces.
            try {
                if (transport.ownFault() == null) {
                    SegmentHeaderDescriptor.beat(endpointFile, now);
                }
                for (ShmLink link : transport.links()) {
                    link.checkPeer(now, peerTimeoutMillis);
                }
                if (now >= nextFileCheck) { // a file cut short fails its link even if no store into it was caught
                    nextFileCheck = now + FILE_CHECK_MILLIS;
                    transport.faulted(null);
                }
                Thread.sleep(heartbeatMillis);
            } catch (InterruptedException e) {
                return;
            } catch (Throwable e) {
                // A fault here (a truncated endpoint file turns into InternalError) must not end the heartbeat and
                // peer checks silently: the file cut short fails its link (or every link), and the loop goes on.
                boolean attributed;
                try {
                    attributed = transport.faulted(e);
                } catch (Throwable again) {
                    attributed = false;
                }
                if (!attributed && now - lastReport >= REPORT_PERIOD_MILLIS) { // at most once every 10 s
                    lastReport = now;
                    System.getLogger("fabricrpc.shm").log(System.Logger.Level.ERROR, "shm liveness of endpoint "
                            + Long.toHexString(transport.endpointId()) + " failed: " + e, e);
                }
            }
        }
    }
}
