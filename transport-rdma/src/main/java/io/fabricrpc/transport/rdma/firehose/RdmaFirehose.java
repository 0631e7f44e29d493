package io.fabricrpc.transport.rdma.firehose;

import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.transport.rdma.spi.RdmaTransport;

import java.lang.foreign.MemorySegment;

/**
 * The firehose cache on RDMA verbs: each bucket is a memory region of the transport's protection domain
 * ({@link RdmaTransport#registerExternal}), so a handle's {@link FirehoseHandle#registration registration} is a
 * {@link LocalRegion} with the lkey ({@link RdmaTransport#localKey}), rkey and address of that bucket.
 */
public final class RdmaFirehose {
    private RdmaFirehose() {
    }

    /** Registers buckets with {@code access} for peers ({@link RemoteAccess#NONE} for write sources). */
    public static Registrar<LocalRegion> registrar(RdmaTransport transport, RemoteAccess access) {
        return new Registrar<>() {
            @Override
            public LocalRegion register(long address, long length) {
                return transport.registerExternal(MemorySegment.ofAddress(address).reinterpret(length), access);
            }

            @Override
            public void deregister(LocalRegion registration) {
                registration.close();
            }
        };
    }

    /** A cache of write sources (buckets grant peers nothing). */
    public static FirehoseCache<LocalRegion> localCache(RdmaTransport transport, FirehoseCache.Config config) {
        return new FirehoseCache<>(config, registrar(transport, RemoteAccess.NONE));
    }

    /**
     * One-sided write of {@code length} bytes of the pinned segment from {@code srcOffset} to {@code dst} at
     * {@code dstOffset}: one work request per bucket the range touches (an SGE cannot span two registrations).
     *
     * @return the ticket of the last write; tickets complete in order, so it covers all of them
     * @throws IndexOutOfBoundsException if the range is outside the pinned segment
     */
    public static long write(Link link, FirehoseHandle<LocalRegion> src, long srcOffset, RemoteRegion dst,
                             long dstOffset, long length) {
        MemorySegment segment = src.segment();
        if (srcOffset < 0 || length <= 0 || srcOffset > segment.byteSize() - length) {
            throw new IndexOutOfBoundsException("write of " + length + " bytes at offset " + srcOffset
                    + " outside the pinned segment of " + segment.byteSize() + " bytes");
        }
        long ticket = 0;
        long done = 0;
        while (done < length) {
            int i = src.bucketIndexOf(srcOffset + done);
            LocalRegion bucket = src.registration(i);
            long from = segment.address() + srcOffset + done - src.bucketAddress(i);
            long chunk = Math.min(length - done, bucket.length() - from);
            ticket = link.write(bucket, from, dst, dstOffset + done, chunk);
            done += chunk;
        }
        return ticket;
    }
}
