package io.fabricrpc.serialization;

import io.fabricrpc.api.SerializationRegistry;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandleInfo;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.SerializedLambda;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns a received {@link FunctionDefinition} into a {@link ReceiverFunction}, after checking that the capturing
 * class is allowed and that the definition is one of that class's own serializable lambdas.
 */
final class FunctionLinker {
    private FunctionLinker() {
    }

    /** The definition is refused; the message names the capturing class and why. */
    static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;

        Refused(String message, Throwable cause) {
            super(message, cause);
        }
    }

    static ReceiverFunction link(SerializationRegistry registry, FunctionDefinition d) throws Refused {
        String capturingName = d.capturingClassName();
        FunctionShape shape = FunctionShape.of(d.functionalInterfaceClass(), d.functionalInterfaceMethodName(),
                d.functionalInterfaceMethodSignature());
        if (shape == null) {
            throw new Refused("function of " + capturingName + " implements "
                    + d.functionalInterfaceClass().replace('/', '.') + "." + d.functionalInterfaceMethodName()
                    + d.functionalInterfaceMethodSignature() + ", not an io.fabricrpc.api shape", null);
        }
        if (!registry.isCapturingClassAllowed(capturingName)) {
            throw new Refused("capturing class " + capturingName + " is not allowed by the serialization registry"
                    + " (allowCapturingClass/allowCapturingPackage)", null);
        }
        try {
            Class<?> capturing = KryoRegistry.capturingClass(registry, capturingName);
            ClassLoader loader = capturing.getClassLoader();
            MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(capturing, MethodHandles.lookup());
            // Validate before resolving any other class the definition names.
            checkAgainstDeserializeLambda(lookup, capturing, d);
            MethodType captureType = MethodType.fromMethodDescriptorString(d.captureTypes(), loader);
            Class<?> implClass = Class.forName(d.implClass().replace('/', '.'), false, loader);
            MethodType implType = MethodType.fromMethodDescriptorString(d.implMethodSignature(), loader);
            MethodHandle impl = implementation(lookup, capturing, implClass, d, implType);
            return compose(shape, impl, captureType.parameterArray(), capturingName + "." + d.implMethodName());
        } catch (Refused e) {
            throw e;
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            throw new Refused("cannot link function " + capturingName + "." + d.implMethodName()
                    + d.implMethodSignature() + ": " + e, e);
        }
    }

    /**
     * javac compiles into every class with serializable lambdas a {@code $deserializeLambda$} that accepts exactly
     * the lambdas written in that class; asking it (once per definition, with placeholder captures) rejects
     * definitions that name any other method.
     */
    private static void checkAgainstDeserializeLambda(MethodHandles.Lookup lookup, Class<?> capturing,
                                                      FunctionDefinition d) throws Refused {
        MethodHandle deserialize;
        try {
            deserialize = lookup.findStatic(capturing, "$deserializeLambda$",
                    MethodType.methodType(Object.class, SerializedLambda.class));
        } catch (NoSuchMethodException | IllegalAccessException e) {
            throw new Refused("capturing class " + capturing.getName() + " has no serializable lambdas", e);
        }
        Object[] placeholders = placeholders(d.captureTypes());
        SerializedLambda claimed = new SerializedLambda(capturing, d.functionalInterfaceClass(),
                d.functionalInterfaceMethodName(), d.functionalInterfaceMethodSignature(), d.implMethodKind(),
                d.implClass(), d.implMethodName(), d.implMethodSignature(), d.instantiatedMethodType(), placeholders);
        try {
            Object ignored = deserialize.invoke(claimed);
        } catch (Throwable e) {
            throw new Refused("definition " + d.implClass().replace('/', '.') + "." + d.implMethodName()
                    + d.implMethodSignature() + " does not match a serializable lambda of capturing class "
                    + capturing.getName(), e);
        }
    }

    /**
     * One placeholder per capture of a {@code (T1..Tn)V} descriptor, read textually so that no class is loaded:
     * a boxed zero for primitives (the casts in {@code $deserializeLambda$} unbox them), null for references.
     */
    static Object[] placeholders(String captureDescriptor) throws Refused {
        List<Object> values = new ArrayList<>();
        int i = 1;
        if (!captureDescriptor.startsWith("(") || !captureDescriptor.endsWith(")V")) {
            throw new Refused("malformed capture descriptor " + captureDescriptor, null);
        }
        int end = captureDescriptor.length() - 2;
        while (i < end) {
            char c = captureDescriptor.charAt(i);
            switch (c) {
                case 'Z' -> values.add(false);
                case 'B' -> values.add((byte) 0);
                case 'C' -> values.add((char) 0);
                case 'S' -> values.add((short) 0);
                case 'I' -> values.add(0);
                case 'F' -> values.add(0f);
                case 'J' -> values.add(0L);
                case 'D' -> values.add(0d);
                case 'L', '[' -> {
                    while (i < end && captureDescriptor.charAt(i) == '[') {
                        i++;
                    }
                    if (i < end && captureDescriptor.charAt(i) == 'L') {
                        i = captureDescriptor.indexOf(';', i);
                        if (i < 0 || i >= end) {
                            throw new Refused("malformed capture descriptor " + captureDescriptor, null);
                        }
                    }
                    values.add(null);
                }
                default -> throw new Refused("malformed capture descriptor " + captureDescriptor, null);
            }
            i++;
        }
        return values.toArray();
    }

    private static MethodHandle implementation(MethodHandles.Lookup lookup, Class<?> capturing, Class<?> implClass,
                                               FunctionDefinition d, MethodType implType)
            throws ReflectiveOperationException, Refused {
        String name = d.implMethodName();
        return switch (d.implMethodKind()) {
            case MethodHandleInfo.REF_invokeStatic -> lookup.findStatic(implClass, name, implType);
            case MethodHandleInfo.REF_invokeVirtual, MethodHandleInfo.REF_invokeInterface ->
                    lookup.findVirtual(implClass, name, implType);
            case MethodHandleInfo.REF_invokeSpecial -> implClass == capturing
                    ? lookup.findSpecial(implClass, name, implType, capturing)
                    : lookup.findVirtual(implClass, name, implType);
            case MethodHandleInfo.REF_newInvokeSpecial -> lookup.findConstructor(implClass, implType);
            default -> throw new Refused("unsupported implementation method kind " + d.implMethodKind()
                    + " in definition of " + d.capturingClassName(), null);
        };
    }

    /**
     * {@code impl(c1..cn, args..)} becomes {@code (MemorySegment, long base, Object[] objects, Object arg)Object}:
     * each primitive capture is read at its constant offset from base, each object capture is taken from the array
     * (the adapted handle casts it to the capture's type).
     */
    static ReceiverFunction compose(FunctionShape shape, MethodHandle impl, Class<?>[] captures, String name)
            throws Refused {
        int n = captures.length;
        int arity = n + shape.argumentCount();
        if (impl.type().parameterCount() != arity) {
            throw new Refused("implementation " + name + impl.type() + " does not take " + n + " captures and "
                    + shape.argumentCount() + " argument(s)", null);
        }
        Class<?>[] adapted = new Class<?>[arity];
        for (int i = 0; i < n; i++) {
            if (captures[i].isPrimitive() && impl.type().parameterType(i) != captures[i]) {
                throw new Refused("primitive capture " + i + " of " + name + " is " + captures[i]
                        + " but the implementation takes " + impl.type().parameterType(i), null);
            }
            adapted[i] = captures[i].isPrimitive() ? captures[i] : Object.class; // the generated code passes Object
        }
        for (int i = n; i < arity; i++) {
            adapted[i] = Object.class;
        }
        // The implementation's own parameter type, before the adaptation below erases it: what the context must be.
        Class<?> contextType = shape.takesContext() ? impl.type().parameterType(n) : null;
        if (!shape.returnsValue()) {
            impl = impl.asType(impl.type().changeReturnType(void.class)); // e.g. StringBuilder::reverse: drop it
        }
        MethodHandle h = impl.asType(MethodType.methodType(Object.class, adapted));

        long[] primitiveOffsets = CallRecordDescriptor.primitiveOffsets(captures);
        int objectCount = 0;
        int[] objectIndex = new int[n];
        Class<?>[] objectTypes = new Class<?>[n];
        for (int i = 0; i < n; i++) {
            if (!captures[i].isPrimitive()) {
                objectTypes[objectCount] = impl.type().parameterType(i);
                objectIndex[i] = objectCount++;
            }
        }
        CaptureCode.Invoker invoker = CaptureCode.invoker(h, captures, primitiveOffsets, objectIndex,
                shape.argumentCount());
        return new ReceiverFunction(shape, invoker, (int) primitiveOffsets[n], objectCount, name,
                contextType != null && contextType.isPrimitive() ? null : contextType,
                java.util.Arrays.copyOf(objectTypes, objectCount));
    }
}
