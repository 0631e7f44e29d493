package io.fabricrpc.transport;

import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;

import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;

/**
 * A real link whose one-sided writes are held back until {@link #deliver()}, in issue order: the network delay
 * of RDMA made visible, so tests can stop the protocol between an outbox write and its arrival in the peer's
 * inbox (the "inbox reads lag the outbox write" rows of Chesterfield's Table 1). Single-threaded test use.
 */
public final class DelayedLink extends ForwardingLink {
    private final ArrayDeque<Runnable> pending = new ArrayDeque<>();

    public DelayedLink(Link link) {
        super(link);
    }

    /** Carries out every held write, oldest first. */
    public int deliver() {
        int count = pending.size();
        while (!pending.isEmpty()) {
            pending.removeFirst().run();
        }
        return count;
    }

    public int pendingWrites() {
        return pending.size();
    }

    @Override
    public long write(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length) {
        dst.checkRange("write", dstOffset, length);
        pending.addLast(() -> link.write(src, srcOffset, dst, dstOffset, length));
        return 1;
    }

    @Override
    public long writeLong(RemoteRegion dst, long dstOffset, long value) {
        dst.checkRange("writeLong", dstOffset, 8);
        pending.addLast(() -> link.writeLong(dst, dstOffset, value));
        return 1;
    }

    @Override
    public long writePublishedInline(MemorySegment src, long srcOffset, RemoteRegion dst, long dstOffset, int length) {
        Link.checkInline(dst, dstOffset, length);
        MemorySegment copy = MemorySegment.ofArray(src.asSlice(srcOffset, length).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
        pending.addLast(() -> link.writePublishedInline(copy, 0, dst, dstOffset, length));
        return 1;
    }

    @Override
    public boolean isComplete(long ticket) {
        return pending.isEmpty();
    }

    @Override
    public void awaitCompletion(long ticket) {
        deliver();
    }
}
