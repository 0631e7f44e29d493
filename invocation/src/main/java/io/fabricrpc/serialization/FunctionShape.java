package io.fabricrpc.serialization;

import io.fabricrpc.api.RemoteBufferConsumer;
import io.fabricrpc.api.RemoteContextConsumer;
import io.fabricrpc.api.RemoteContextFunction;
import io.fabricrpc.api.RemoteRunnable;
import io.fabricrpc.api.RemoteSupplier;

/** The remote function shapes of {@code io.fabricrpc.api}; the only functional interfaces a definition may name. */
enum FunctionShape {
    /** {@link RemoteRunnable#run()}; the decoder's argument is ignored, the result is {@code null}. */
    RUNNABLE(RemoteRunnable.class, "run", "()V", 0),
    /** {@link RemoteSupplier#get()}; the decoder's argument is ignored, the result is the returned value. */
    SUPPLIER(RemoteSupplier.class, "get", "()Ljava/lang/Object;", 0),
    /** {@link RemoteBufferConsumer#accept}; the decoder's argument is the received buffer, the result is {@code null}. */
    BUFFER_CONSUMER(RemoteBufferConsumer.class, "accept", "(Ljava/lang/foreign/MemorySegment;)V", 1),
    /** {@link RemoteContextConsumer#accept}; receives the decoder's context object, the result is {@code null}. */
    CONTEXT_CONSUMER(RemoteContextConsumer.class, "accept", "(Ljava/lang/Object;)V", 1),
    /** {@link RemoteContextFunction#apply}; receives the decoder's context object, the result is the returned value. */
    CONTEXT_FUNCTION(RemoteContextFunction.class, "apply", "(Ljava/lang/Object;)Ljava/lang/Object;", 1);

    private final Class<?> functionalInterface;
    private final String internalName;
    private final String methodName;
    private final String methodDescriptor;
    private final int argumentCount;

    FunctionShape(Class<?> functionalInterface, String methodName, String methodDescriptor, int argumentCount) {
        this.functionalInterface = functionalInterface;
        this.internalName = functionalInterface.getName().replace('.', '/');
        this.methodName = methodName;
        this.methodDescriptor = methodDescriptor;
        this.argumentCount = argumentCount;
    }

    /** The {@code io.fabricrpc.api} interface of this shape. */
    Class<?> functionalInterface() {
        return functionalInterface;
    }

    int argumentCount() {
        return argumentCount;
    }

    /** The function's argument is the decoder's context object. */
    boolean takesContext() {
        return this == CONTEXT_CONSUMER || this == CONTEXT_FUNCTION;
    }

    /** The function's value is the call's result (the others' is dropped). */
    boolean returnsValue() {
        return this == SUPPLIER || this == CONTEXT_FUNCTION;
    }

    /** The shape whose interface, method name and erased descriptor are exactly these, or {@code null}. */
    static FunctionShape of(String interfaceInternalName, String methodName, String methodDescriptor) {
        for (FunctionShape shape : values()) {
            if (shape.internalName.equals(interfaceInternalName) && shape.methodName.equals(methodName)
                    && shape.methodDescriptor.equals(methodDescriptor)) {
                return shape;
            }
        }
        return null;
    }
}
