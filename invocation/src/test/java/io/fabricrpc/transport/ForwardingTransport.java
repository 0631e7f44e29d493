package io.fabricrpc.transport;

import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;

/** A transport that hands everything to another; test transports override what they change (their links). */
public abstract class ForwardingTransport implements Transport {
    protected final Transport transport;

    protected ForwardingTransport(Transport transport) {
        this.transport = transport;
    }

    @Override
    public String kind() {
        return transport.kind();
    }

    @Override
    public long endpointId() {
        return transport.endpointId();
    }

    @Override
    public EndpointAddress address() {
        return transport.address();
    }

    @Override
    public LocalRegion allocate(long bytes, RemoteAccess access) {
        return transport.allocate(bytes, access);
    }

    @Override
    public Link connect(EndpointAddress peer) {
        return transport.connect(peer);
    }

    @Override
    public int maxMessageSize() {
        return transport.maxMessageSize();
    }

    @Override
    public int pollMessages(MessageHandler handler, int limit) {
        return transport.pollMessages(handler, limit);
    }

    @Override
    public boolean memoryFault(Throwable fault) {
        return transport.memoryFault(fault);
    }

    @Override
    public void onEndpointFault(java.util.function.Consumer<String> listener) {
        transport.onEndpointFault(listener);
    }

    @Override
    public void close() {
        transport.close();
    }
}
