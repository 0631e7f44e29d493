package io.fabricrpc.transport;

import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * A real transport whose links map no peer memory ({@link Link#directWindow} is null), so that protocols take the
 * path they take over RDMA — staging, {@link Link#writePublished}, {@link Link#writeFirstByteAs}, deferred flags — over
 * shared memory in this JVM. Counts the work requests the same calls would post over RDMA, and plays a backlogged
 * send queue on demand ({@link #backlogged}), which shared memory never has.
 */
public final class WindowlessTransport extends ForwardingTransport {
    /** Work requests an RDMA link would have posted for the one-sided writes so far. */
    public final AtomicLong workRequests = new AtomicLong();
    /** What the links' {@link Link#isBacklogged} answers (asked on the sending thread). */
    public volatile BooleanSupplier backlogged = () -> false;

    public WindowlessTransport(Transport transport) {
        super(transport);
    }

    @Override
    public Link connect(EndpointAddress peer) {
        return new WindowlessLink(transport.connect(peer));
    }

    private final class WindowlessLink extends ForwardingLink {
        WindowlessLink(Link link) {
            super(link);
        }

        @Override
        public long write(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length) {
            workRequests.incrementAndGet();
            return link.write(src, srcOffset, dst, dstOffset, length);
        }

        @Override
        public long writeLong(RemoteRegion dst, long dstOffset, long value) {
            workRequests.incrementAndGet();
            return link.writeLong(dst, dstOffset, value);
        }

        @Override
        public long writePublished(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length) {
            workRequests.addAndGet(2);
            return link.writePublished(src, srcOffset, dst, dstOffset, length);
        }

        @Override
        public long writeFirstByteAs(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length,
                                     byte first) {
            workRequests.incrementAndGet(); // one gathering WRITE over RDMA
            return link.writeFirstByteAs(src, srcOffset, dst, dstOffset, length, first);
        }

        @Override
        public long writePublishedInline(MemorySegment src, long srcOffset, RemoteRegion dst, long dstOffset, int length) {
            workRequests.addAndGet(length == 1 ? 1 : 2);
            return link.writePublishedInline(src, srcOffset, dst, dstOffset, length);
        }

        @Override
        public long read(RemoteRegion src, long srcOffset, LocalRegion dst, long dstOffset, long length) {
            workRequests.incrementAndGet();
            return link.read(src, srcOffset, dst, dstOffset, length);
        }

        @Override
        public boolean isBacklogged(long ticket) {
            return backlogged.getAsBoolean();
        }
    }
}
