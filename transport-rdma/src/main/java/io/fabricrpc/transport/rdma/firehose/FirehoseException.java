package io.fabricrpc.transport.rdma.firehose;

import io.fabricrpc.api.TransportException;

/**
 * A firehose request that cannot be satisfied: a {@link FirehoseCache#pin} that found no room before its deadline,
 * a registration the device refused, a remote firehose move the peer declined. The message carries the values.
 */
public class FirehoseException extends TransportException {
    public FirehoseException(String message) {
        super(message);
    }

    public FirehoseException(String message, Throwable cause) {
        super(message, cause);
    }
}
