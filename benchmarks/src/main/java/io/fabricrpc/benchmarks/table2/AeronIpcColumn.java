package io.fabricrpc.benchmarks.table2;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.FragmentHandler;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.IdleStrategy;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The {@code aeron-ipc} baseline: the same longs as the calls, carried by Aeron's IPC publication between the two
 * processes, as an Aeron user runs it. The sender claims each message in the publication's term buffer
 * ({@link ExclusivePublication#tryClaim}, one writer), writes the longs in place and commits; the receiver polls
 * the subscription, {@value #FRAGMENT_LIMIT} fragments at a time, and sums each message's longs into
 * {@link Payloads.Sink}, as {@code raw} does.
 *
 * <p>Unlike the bare Agrona ring of {@code raw}, IPC needs a media driver: the receiving rank runs one embedded
 * ({@link ThreadingMode#SHARED}: one driver thread, waiting with the messengers' back-off when idle) in a
 * directory of its own next to the run's shared file, and both ranks connect to it. The driver's conductor moves
 * the publisher's limit as the subscriber advances, so during a measurement it is a third busy thread on the
 * machine. The term is twice the run's memory per stream, so that Aeron's window (half a term, as Aeron sets it)
 * is what every other column gets; under shm by default that is Aeron's own IPC default, 64 MiB terms.
 */
final class AeronIpcColumn implements Column {
    static final String NAME = "aeron-ipc";
    static final int STREAM_ID = 1001;
    static final int FRAGMENT_LIMIT = 64;
    static final int DEFAULT_TERM_LENGTH = io.aeron.driver.Configuration.TERM_BUFFER_IPC_LENGTH_DEFAULT;
    static final int MIN_TERM_LENGTH = io.aeron.logbuffer.LogBufferDescriptor.TERM_MIN_LENGTH;
    static final int MAX_TERM_LENGTH = io.aeron.logbuffer.LogBufferDescriptor.TERM_MAX_LENGTH;

    private final MediaDriver driver; // receiving rank only
    private final Aeron aeron;
    private final ExclusivePublication publication; // sending rank only
    private final Subscription subscription; // receiving rank only
    private final BufferClaim claim = new BufferClaim();
    private final IdleStrategy idle = RawRingColumn.newIdleStrategy();
    private final FragmentHandler handler = AeronIpcColumn::onFragment;
    private final long timeoutNanos;
    private final int termLength;

    /**
     * @param sender     whether this is the sending rank (else it runs the driver and subscribes)
     * @param directory  the Aeron directory for this run (the driver creates it, deletes it on close)
     * @param termLength term buffer length, a power of two from 64 KiB
     */
    AeronIpcColumn(boolean sender, Path directory, int termLength, long timeoutMillis) {
        this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        this.termLength = termLength;
        String channel = "aeron:ipc?term-length=" + termLength;
        MediaDriver launched = null;
        Aeron client = null;
        try {
            if (!sender) {
                launched = MediaDriver.launchEmbedded(new MediaDriver.Context()
                        .aeronDirectoryName(directory.toString())
                        .dirDeleteOnStart(true)
                        .dirDeleteOnShutdown(true)
                        .threadingMode(ThreadingMode.SHARED)
                        .sharedIdleStrategy(RawRingColumn.newIdleStrategy()));
            }
            // The sending rank waits here (up to the timeout) for the receiving rank's driver to come up.
            client = Aeron.connect(new Aeron.Context()
                    .aeronDirectoryName(directory.toString())
                    .driverTimeoutMs(timeoutMillis));
            this.driver = launched;
            this.aeron = client;
            this.publication = sender ? client.addExclusivePublication(channel, STREAM_ID) : null;
            this.subscription = sender ? null : client.addSubscription(channel, STREAM_ID);
            if (sender) {
                awaitSubscriber(directory);
            }
        } catch (RuntimeException e) {
            CloseHelper.quietCloseAll(client, launched);
            // The log takes 3 terms in the directory's file system (192 MiB at Aeron's default; a container's
            // /dev/shm is often 64 MiB).
            throw new IllegalStateException("aeron-ipc: cannot set up IPC with terms of " + termLength + " B (a log of "
                    + 3L * termLength + " B) in " + directory + ": " + e + "; try a smaller --aeron-term-length, or"
                    + " --columns without aeron-ipc", e);
        }
    }

    private void awaitSubscriber(Path directory) {
        long start = System.nanoTime();
        idle.reset();
        while (!publication.isConnected()) {
            if (System.nanoTime() - start > timeoutNanos) {
                throw new IllegalStateException("no subscriber on stream " + STREAM_ID + " after "
                        + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms (driver directory " + directory + ")");
            }
            idle.idle();
        }
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public long sendUntil(int payloadBytes, long first, long deadlineNanos) {
        int longs = Payloads.checkedLongs(payloadBytes);
        long i = first;
        do {
            for (int b = 0; b < FabricColumn.BATCH; b++, i++) {
                claim(payloadBytes, i);
                MutableDirectBuffer buffer = claim.buffer();
                int offset = claim.offset();
                for (int j = 0; j < longs; j++) {
                    buffer.putLong(offset + j * Long.BYTES, i + j);
                }
                claim.commit(); // Aeron: release store of the frame length publishes the longs
            }
        } while (System.nanoTime() - deadlineNanos < 0);
        return i - first;
    }

    private void claim(int length, long i) {
        long result = publication.tryClaim(length, claim);
        if (result > 0) {
            return;
        }
        long start = System.nanoTime();
        idle.reset();
        while ((result = publication.tryClaim(length, claim)) <= 0) {
            if (result == Publication.CLOSED || result == Publication.MAX_POSITION_EXCEEDED) {
                throw new IllegalStateException("aeron-ipc: publication refused message " + i + " of " + length
                        + " bytes for good: " + Publication.errorString(result));
            }
            if (System.nanoTime() - start > timeoutNanos) {
                throw new IllegalStateException("aeron-ipc: message " + i + " of " + length + " bytes not claimed for "
                        + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms: " + Publication.errorString(result)
                        + " (position " + publication.position() + ", limit " + publication.positionLimit() + ")");
            }
            idle.idle();
        }
    }

    @Override
    public void flush() {
        // every message is in the term buffer once tryClaim/commit returned
    }

    @Override
    public int poll() {
        return subscription.poll(handler, FRAGMENT_LIMIT);
    }

    private static void onFragment(DirectBuffer buffer, int offset, int length, io.aeron.logbuffer.Header header) {
        Payloads.takeLongs(buffer, offset, length);
    }

    @Override
    public void close() {
        CloseHelper.quietCloseAll(aeron, driver);
    }

    @Override
    public String toString() {
        return NAME + " (Aeron IPC, term " + termLength / 1024 + " KiB, embedded driver SHARED)";
    }
}
