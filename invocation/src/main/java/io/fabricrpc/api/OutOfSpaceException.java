package io.fabricrpc.api;

/**
 * Memory for a region could not be had for want of room (a full {@code shm.dir}, a memory limit): the message names
 * the place and the bytes asked for. A receiver that cannot grant chunks for this reason says so to the sender.
 */
public class OutOfSpaceException extends TransportException {
    /**
     * Creates the exception.
     *
     * @param message where space ran out and how many bytes were asked for
     */
    public OutOfSpaceException(String message) {
        super(message);
    }
}
