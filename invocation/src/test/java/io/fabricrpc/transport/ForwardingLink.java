package io.fabricrpc.transport;

import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;

import java.lang.foreign.MemorySegment;

/**
 * A link that hands every operation the SPI requires to another; test links override what they change. The
 * SPI's default methods are not forwarded: they stay composed of the required ones, so a subclass that intercepts
 * {@code write} and {@code writePublishedInline} intercepts {@code writePublished} and {@code writeFirstByteAs} too,
 * and {@link #directWindow} stays null (no mapped window), as over RDMA.
 */
public abstract class ForwardingLink implements Link {
    protected final Link link;

    protected ForwardingLink(Link link) {
        this.link = link;
    }

    @Override
    public long peerId() {
        return link.peerId();
    }

    @Override
    public EndpointAddress peerAddress() {
        return link.peerAddress();
    }

    @Override
    public long write(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length) {
        return link.write(src, srcOffset, dst, dstOffset, length);
    }

    @Override
    public long writeLong(RemoteRegion dst, long dstOffset, long value) {
        return link.writeLong(dst, dstOffset, value);
    }

    @Override
    public long writePublishedInline(MemorySegment src, long srcOffset, RemoteRegion dst, long dstOffset, int length) {
        return link.writePublishedInline(src, srcOffset, dst, dstOffset, length);
    }

    @Override
    public long read(RemoteRegion src, long srcOffset, LocalRegion dst, long dstOffset, long length) {
        return link.read(src, srcOffset, dst, dstOffset, length);
    }

    @Override
    public boolean send(int type, MemorySegment payload, long offset, int length) {
        return link.send(type, payload, offset, length);
    }

    @Override
    public boolean isComplete(long ticket) {
        return link.isComplete(ticket);
    }

    @Override
    public void awaitCompletion(long ticket) {
        link.awaitCompletion(ticket);
    }

    @Override
    public void checkAlive() {
        link.checkAlive();
    }

    @Override
    public boolean isAlive() {
        return link.isAlive();
    }

    @Override
    public void fence(String reason) {
        link.fence(reason);
    }
}
