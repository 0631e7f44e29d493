package io.fabricrpc.serialization;

import io.fabricrpc.api.SerializationRegistry;

/**
 * Thrown by the sender when a captured value or a result (or an object reachable from it) is of a class that is not
 * registered with the {@link SerializationRegistry}. Nothing has been committed when it is thrown: the encoder's
 * state is unchanged and no record was produced.
 */
public final class UnregisteredClassException extends SerializationException {
    private static final long serialVersionUID = 1L;

    private final String className;

    public UnregisteredClassException(String className, String context, Throwable cause) {
        super("class " + className + " is not registered for remote calls (" + context
                + "); register it with SerializationRegistry.Builder.register on both ends", cause);
        this.className = className;
    }

    /** Binary name of the unregistered class. */
    public String className() {
        return className;
    }
}
