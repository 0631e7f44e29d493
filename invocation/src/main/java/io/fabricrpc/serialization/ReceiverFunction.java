package io.fabricrpc.serialization;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodType;

/**
 * Receiver-side invoker of one function definition: generated code that reads every primitive capture straight
 * from the record, takes object captures from the decoder's scratch array, and calls the implementation
 * method. Immutable; shared by all links of a registry.
 */
final class ReceiverFunction {
    /** {@code (MemorySegment record, long primitivesAt, Object[] objects, Object argument)Object}. */
    static final MethodType INVOKER_TYPE = MethodType.methodType(Object.class, MemorySegment.class, long.class,
            Object[].class, Object.class);

    final FunctionShape shape;
    /** The argument is the decoder's context rather than the caller's argument. */
    final boolean takesContext;
    /** For functions of the context: the type the implementation takes it as (null for the other shapes). */
    final Class<?> contextType;
    final CaptureCode.Invoker invoker;
    final int primitiveBytes;
    final int objectCount;
    /** {@code capturingClass.implMethodName} for messages. */
    final String name;
    /** What the implementation takes each object capture as: the decoder checks what it read against it. */
    final Class<?>[] objectTypes;

    ReceiverFunction(FunctionShape shape, CaptureCode.Invoker invoker, int primitiveBytes, int objectCount, String name,
                     Class<?> contextType, Class<?>[] objectTypes) {
        this.shape = shape;
        this.takesContext = shape.takesContext();
        this.contextType = contextType;
        this.invoker = invoker;
        this.primitiveBytes = primitiveBytes;
        this.objectCount = objectCount;
        this.name = name;
        this.objectTypes = objectTypes;
    }

    /** Whether object capture {@code i} may be {@code value}: what the invoker's cast (or unboxing) accepts. */
    boolean accepts(int i, Object value) {
        Class<?> type = objectTypes[i];
        if (value == null) {
            return !type.isPrimitive();
        }
        return type.isPrimitive() ? MethodType.methodType(type).wrap().returnType() == value.getClass()
                : type.isInstance(value);
    }
}
