package io.fabricrpc.serialization;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.MutableCallSite;
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
 * Sender-side knowledge of one lambda class, computed once per class and shared by all encoders: its definition, the
 * generated writer that copies its primitive captures, and handles that read its object captures.
 * {@code SerializedLambda} is used here only, once per class.
 * A record because the JIT trusts a record's final fields: a constant SenderFunction has constant fields.
 */
record SenderFunction(
        /* Dense process-wide index of this lambda class, so encoders find their id for it in an array. */
        int index,
        FunctionDefinition definition,
        String capturingClassName,
        byte[] definitionBytes,
        /* Writes all primitive captures with generated straight-line code. */
        CaptureCode.CaptureWriter primitiveWriter,
        int primitiveBytes,
        /* (Object function)Object per object capture, in capture order. */
        MethodHandle[] objectGetters,
        String[] objectCaptureNames,
        /* Whether objectGetters is not empty: a field, so that reading it is an accessor, which C2 inlines even
         * past its node-count cutoff (the branch on it must fold for the lambda not to escape; see CapturedCall). */
        boolean capturesObjects) {
    private static final AtomicInteger NEXT_INDEX = new AtomicInteger();

    private static final ClassValue<Slot> SLOTS = new ClassValue<>() {
        @Override
        protected Slot computeValue(Class<?> type) {
            return new Slot();
        }
    };

    /*
     * Hot lambda classes get a generated lookup, installed as the target of a MutableCallSite: compares against
     * constant classes, returning constant SenderFunctions. Where a call inlines down to here from the code that
     * built the lambda, the JIT knows the lambda's exact class, folds the compares, and the SenderFunction, its
     * (trusted, record) fields and its capture writer become constants: the writer inlines, and with it every read of
     * the lambda, so escape analysis can drop the lambda object itself. A class joins the lookup once it has been
     * called DISPATCH_AFTER times through the ClassValue (so classes used a few times at start-up take no room), while
     * fewer than MAX_DISPATCHED have joined; the lookup's compares are then bounded. The ClassValue serves everything
     * else (the lambda is then allocated, as before).
     */
    static final int DISPATCH_AFTER = 256;
    static final int MAX_DISPATCHED = 16;
    private static final MutableCallSite DISPATCH = new MutableCallSite(
            MethodType.methodType(SenderFunction.class, Object.class));
    private static final MethodHandle DISPATCHER = DISPATCH.dynamicInvoker();
    /** The installed lookup's classes and their senders, in order; guarded by SenderFunction.class. */
    private static final List<Class<?>> dispatchedTypes = new ArrayList<>();
    private static final List<SenderFunction> dispatchedSenders = new ArrayList<>();

    static {
        try {
            DISPATCH.setTarget(MethodHandles.lookup().findStatic(SenderFunction.class, "miss",
                    MethodType.methodType(SenderFunction.class, Object.class)));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static SenderFunction create(FunctionDefinition definition, CaptureCode.CaptureWriter primitiveWriter,
                                         int primitiveBytes, MethodHandle[] objectGetters,
                                         String[] objectCaptureNames) {
        return new SenderFunction(NEXT_INDEX.getAndIncrement(), definition, definition.capturingClassName(),
                definition.toBytes(), primitiveWriter, primitiveBytes, objectGetters, objectCaptureNames,
                objectGetters.length != 0);
    }

    /**
     * The sender view of {@code function}'s class, introspected on first use.
     *
     * @throws IllegalArgumentException if it is not a serializable lambda or method reference of an
     *                                  {@code io.fabricrpc.api} shape, or its class cannot be accessed
     */
    static SenderFunction of(Object function) {
        try {
            return (SenderFunction) DISPATCHER.invokeExact(function);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("sender lookup failed for " + function.getClass().getName(), e);
        }
    }

    /** The generated lookup's miss path (and the lookup until one is generated): introspects, counts towards joining. */
    static SenderFunction miss(Object function) {
        Class<?> type = function.getClass();
        Slot slot = SLOTS.get(type);
        SenderFunction sender = slot.function; // volatile read: a published SenderFunction is fully built
        if (sender == null) {
            sender = slot.init(function);
        }
        if (!slot.settled) { // plain read: a stale false only costs another count
            countMiss(type, slot, sender);
        }
        return sender;
    }

    private static void countMiss(Class<?> type, Slot slot, SenderFunction sender) {
        if (++slot.misses < DISPATCH_AFTER) { // racy: a lost count only delays joining
            return;
        }
        synchronized (SenderFunction.class) {
            if (slot.settled) {
                return;
            }
            slot.settled = true; // whether it joins or the lookup is full, this class stops counting
            if (dispatchedTypes.size() < MAX_DISPATCHED) {
                dispatchedTypes.add(type);
                dispatchedSenders.add(sender);
                // A racing caller may still run the old lookup: it misses and lands here, where the class is found.
                DISPATCH.setTarget(CaptureCode.senderLookup(dispatchedTypes, dispatchedSenders));
            }
        }
    }

    /** Whether {@code type} is in the generated lookup (tests). */
    static boolean isDispatched(Class<?> type) {
        synchronized (SenderFunction.class) {
            return dispatchedTypes.contains(type);
        }
    }

    /** Whether the generated lookup holds MAX_DISPATCHED classes (tests). */
    static boolean isDispatchFull() {
        synchronized (SenderFunction.class) {
            return dispatchedTypes.size() >= MAX_DISPATCHED;
        }
    }

    private static final class Slot {
        private volatile SenderFunction function;
        /** Calls through the ClassValue so far, until settled. */
        private int misses;
        /** Whether this class joined the generated lookup, or found it full; set under SenderFunction.class. */
        private boolean settled;

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
                    + ", not one of RemoteRunnable, RemoteSupplier, RemoteBufferConsumer, RemoteContextConsumer,"
                    + " RemoteContextFunction");
        }
        Field[] fields = captureFields(type, lambda);
        Class<?>[] captureTypes = new Class<?>[fields.length];
        List<Field> primitiveFields = new ArrayList<>();
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
                    primitiveFields.add(field);
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
        CaptureCode.CaptureWriter writer = CaptureCode.writer(type, primitiveFields,
                Arrays.stream(offsets, 0, captureTypes.length).filter(offset -> offset >= 0).toArray());
        return create(definition, writer, primitiveBytes, objectGetters.toArray(MethodHandle[]::new),
                objectNames.toArray(String[]::new));
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
