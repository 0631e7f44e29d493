package io.fabricrpc.transport;

import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;

import java.lang.foreign.MemorySegment;

/**
 * A link to nowhere for fabric-free harnesses (the fuzz targets): every write and read completes at once without
 * moving bytes, and a two-sided send is handed to {@link #onSend} (accepted unless it says otherwise).
 */
public class NullLink implements Link {
    private final long peerId;

    public NullLink(long peerId) {
        this.peerId = peerId;
    }

    /** What a send does; accepted (true) and dropped by default. */
    protected boolean onSend(int type, MemorySegment payload, long offset, int length) {
        return true;
    }

    @Override
    public long peerId() {
        return peerId;
    }

    @Override
    public EndpointAddress peerAddress() {
        return new EndpointAddress("null", new byte[0]);
    }

    @Override
    public long write(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length) {
        return 0;
    }

    @Override
    public long writeLong(RemoteRegion dst, long dstOffset, long value) {
        return 0;
    }

    @Override
    public long writePublishedInline(MemorySegment src, long srcOffset, RemoteRegion dst, long dstOffset, int length) {
        return 0;
    }

    @Override
    public long read(RemoteRegion src, long srcOffset, LocalRegion dst, long dstOffset, long length) {
        return 0;
    }

    @Override
    public boolean send(int type, MemorySegment payload, long offset, int length) {
        return onSend(type, payload, offset, length);
    }

    @Override
    public boolean isComplete(long ticket) {
        return true;
    }

    @Override
    public void awaitCompletion(long ticket) {
    }

    @Override
    public void checkAlive() {
    }

    @Override
    public boolean isAlive() {
        return true;
    }

    @Override
    public void fence(String reason) {
    }
}
