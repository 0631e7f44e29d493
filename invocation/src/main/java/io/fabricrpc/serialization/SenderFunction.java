package io.fabricrpc.serialization;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.SerializedLambda;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Sender-side knowledge of one lambda class, computed once per class and shared by all encoders: its definition
 * and exact-typed handles that read its captured fields. {@code SerializedLambda} is used here only, once per class.
 */
final class SenderFunction {
    private static final AtomicInteger NEXT_INDEX = new AtomicInteger();

    private static final ClassValue<Slot> SLOTS = new ClassValue<>() {
        @Override
        protected Slot computeValue(Class<?> type) {
            return new Slot();
        }
    };

    /** Dense process-wide index of this lambda class, so encoders find their id for it in an array. */
    final int index;
    final FunctionDefinition definition;
    final String capturingClassName;
    final byte[] definitionBytes;
    /** Writes all primitive captures with generated straight-line code. */
    final CaptureCode.CaptureWriter primitiveWriter;
    final int primitiveBytes;
    /** {@code (Object function)Object} per object capture, in capture order. */
    final MethodHandle[] objectGetters;
    final String[] objectCaptureNames;

    private SenderFunction(int index, FunctionDefinition definition, CaptureCode.CaptureWriter primitiveWriter,
                           int primitiveBytes,
                           MethodHandle[] objectGetters, String[] objectCaptureNames) {
        this.index = index;
        this.definition = definition;
        this.capturingClassName = definition.capturingClassName();
        this.definitionBytes = definition.toBytes();
        this.primitiveWriter = primitiveWriter;
        this.primitiveBytes = primitiveBytes;
        this.objectGetters = objectGetters;
        this.objectCaptureNames = objectCaptureNames;
    }

    /**
     * The sender view of {@code function}'s class, introspected on first use.
     *
     * @throws IllegalArgumentException if it is not a serializable lambda or method reference of an
     *                                  {@code io.fabricrpc.api} shape, or its class cannot be accessed
     */
    static SenderFunction of(Object function) {
        Slot slot = SLOTS.get(function.getClass());
        SenderFunction known = slot.function; // volatile read: a published SenderFunction is fully built
        return known != null ? known : slot.init(function);
    }

    private static final class Slot {
        private volatile SenderFunction function;

        synchronized SenderFunction init(Object instance) {
            if (function == null) {
                function = introspect(instance); // volatile write publishes the immutable SenderFunction
            }
            return function;
        }
    }

    private static SenderFunction introspect(Object function) {
        Class<?> type = function.getClass();
        if (!type.isHidden()) {
            throw new IllegalArgumentException("not a lambda or method reference: " + type.getName()
                    + "; remote functions must be lambdas or method references of an io.fabricrpc.api interface");
        }
        MethodHandles.Lookup lookup;
        try {
            lookup = MethodHandles.privateLookupIn(type, MethodHandles.lookup());
        } catch (IllegalAccessException e) {
            throw new IllegalArgumentException("cannot access lambda class " + type.getName() + " (package "
                    + type.getPackageName() + " must be opened to io.fabricrpc.invocation)", e);
        }
        SerializedLambda lambda = serializedForm(function, type, lookup);
        FunctionShape shape = FunctionShape.of(lambda.getFunctionalInterfaceClass(),
                lambda.getFunctionalInterfaceMethodName(), lambda.getFunctionalInterfaceMethodSignature());
        if (shape == null) {
            throw new IllegalArgumentException("lambda " + type.getName() + " implements "
                    + lambda.getFunctionalInterfaceClass().replace('/', '.')
                    + ", not one of RemoteRunnable, RemoteSupplier, RemoteBufferConsumer, RemoteContextConsumer");
        }
        Field[] fields = captureFields(type, lambda);
        Class<?>[] captureTypes = new Class<?>[fields.length];
        List<MethodHandle> primitiveGetters = new ArrayList<>();
        List<MethodHandle> objectGetters = new ArrayList<>();
        List<String> objectNames = new ArrayList<>();
        try {
            for (int i = 0; i < fields.length; i++) {
                Field field = fields[i];
                Class<?> fieldType = field.getType();
                captureTypes[i] = fieldType;
                MethodHandle getter = lookup.unreflectGetter(field);
                checkCapture(function, lambda, i, getter, type);
                if (fieldType.isPrimitive()) {
                    primitiveGetters.add(getter.asType(MethodType.methodType(fieldType, Object.class)));
                } else {
                    objectGetters.add(getter.asType(MethodType.methodType(Object.class, Object.class)));
                    objectNames.add("capture " + i + " (" + fieldType.getName() + ")");
                }
            }
        } catch (IllegalAccessException e) {
            throw new IllegalArgumentException("cannot read the captures of " + type.getName(), e);
        }
        String captureDescriptor = MethodType.methodType(void.class, captureTypes).toMethodDescriptorString();
        FunctionDefinition definition = FunctionDefinition.of(lambda, captureDescriptor);
        long[] offsets = CallRecordDescriptor.primitiveOffsets(captureTypes);
        int primitiveBytes = (int) offsets[captureTypes.length];
        CaptureCode.CaptureWriter writer = CaptureCode.writer(primitiveGetters,
                Arrays.stream(offsets, 0, captureTypes.length).filter(offset -> offset >= 0).toArray());
        return new SenderFunction(NEXT_INDEX.getAndIncrement(), definition, writer, primitiveBytes,
                objectGetters.toArray(MethodHandle[]::new), objectNames.toArray(String[]::new));
    }

    private static SerializedLambda serializedForm(Object function, Class<?> type, MethodHandles.Lookup lookup) {
        MethodHandle writeReplace;
        try {
            writeReplace = lookup.findVirtual(type, "writeReplace", MethodType.methodType(Object.class));
        } catch (NoSuchMethodException | IllegalAccessException e) {
            throw new IllegalArgumentException("lambda " + type.getName() + " is not serializable: its target type must"
                    + " be an io.fabricrpc.api interface (they extend java.io.Serializable)", e);
        }
        try {
            return (SerializedLambda) writeReplace.invoke(function);
        } catch (Throwable e) {
            throw new IllegalArgumentException("cannot read the definition of lambda " + type.getName(), e);
        }
    }

    /** The instance fields holding the captures, in capture order ({@code arg$1, arg$2, ...}). */
    private static Field[] captureFields(Class<?> type, SerializedLambda lambda) {
        Field[] fields = Arrays.stream(type.getDeclaredFields())
                .filter(f -> !Modifier.isStatic(f.getModifiers()))
                .toArray(Field[]::new);
        if (fields.length != lambda.getCapturedArgCount()) {
            throw new IllegalStateException("lambda " + type.getName() + " has " + fields.length
                    + " instance fields but " + lambda.getCapturedArgCount() + " captures");
        }
        if (Arrays.stream(fields).allMatch(f -> f.getName().matches("arg\\$\\d+"))) {
            Arrays.sort(fields, Comparator.comparingInt(f -> Integer.parseInt(f.getName().substring(4))));
        }
        return fields;
    }

    /** Once per class: the getter for capture i must read what {@code SerializedLambda} says capture i is. */
    private static void checkCapture(Object function, SerializedLambda lambda, int i, MethodHandle getter,
                                     Class<?> type) {
        Object viaGetter;
        try {
            viaGetter = getter.invoke(function);
        } catch (Throwable e) {
            throw new IllegalStateException("cannot read capture " + i + " of " + type.getName(), e);
        }
        Object expected = lambda.getCapturedArg(i);
        boolean same = getter.type().returnType().isPrimitive() ? Objects.equals(viaGetter, expected)
                : viaGetter == expected;
        if (!same) {
            throw new IllegalStateException("capture fields of " + type.getName() + " are not in capture order");
        }
    }
}
