package io.fabricrpc.serialization;

import java.lang.classfile.ClassFile;
import java.lang.classfile.TypeKind;
import java.lang.constant.ClassDesc;
import java.lang.constant.ConstantDescs;
import java.lang.constant.DynamicConstantDesc;
import java.lang.constant.MethodTypeDesc;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Binds a composed {@link MethodHandle} into a tiny hidden class that implements one of the codec's interfaces and
 * calls the handle as a constant (loaded with {@code ldc} from the class data). A handle held in a field is opaque to
 * the JIT, so every call went through the handle's lambda forms; as a constant the whole capture reader/writer chain
 * is inlined into plain field loads and stores. One class per lambda class (sender) or definition (receiver).
 */
final class ConstantHandles {
    /** Writes every primitive capture of {@code function} at {@code base}. */
    interface CaptureWriter {
        void write(Object function, MemorySegment segment, long base);
    }

    /** Reads the captures at {@code base} (objects from {@code objects}) and runs the implementation method. */
    interface Invoker {
        Object invoke(MemorySegment segment, long base, Object[] objects, Object argument);
    }

    private static final MethodHandles.Lookup LOOKUP = MethodHandles.lookup();
    private static final ClassDesc METHOD_HANDLE = ClassDesc.of(MethodHandle.class.getName());

    private ConstantHandles() {
    }

    static CaptureWriter writer(MethodHandle target) {
        return bind(CaptureWriter.class, "write",
                MethodType.methodType(void.class, Object.class, MemorySegment.class, long.class), target);
    }

    static Invoker invoker(MethodHandle target) {
        return bind(Invoker.class, "invoke", ReceiverFunction.INVOKER_TYPE, target);
    }

    private static <T> T bind(Class<T> face, String method, MethodType type, MethodHandle target) {
        MethodHandle exact = target.asType(type);
        ClassDesc self = ClassDesc.of(ConstantHandles.class.getPackageName() + ".Bound" + face.getSimpleName());
        MethodTypeDesc desc = type.describeConstable().orElseThrow();
        DynamicConstantDesc<MethodHandle> handle = DynamicConstantDesc.ofNamed(ConstantDescs.BSM_CLASS_DATA,
                ConstantDescs.DEFAULT_NAME, METHOD_HANDLE);
        byte[] bytes = ClassFile.of().build(self, cls -> cls
                .withFlags(ClassFile.ACC_FINAL | ClassFile.ACC_SYNTHETIC)
                .withInterfaceSymbols(face.describeConstable().orElseThrow())
                .withMethodBody(ConstantDescs.INIT_NAME, ConstantDescs.MTD_void, ClassFile.ACC_PUBLIC, code -> code
                        .aload(0)
                        .invokespecial(ConstantDescs.CD_Object, ConstantDescs.INIT_NAME, ConstantDescs.MTD_void)
                        .return_())
                .withMethodBody(method, desc, ClassFile.ACC_PUBLIC | ClassFile.ACC_FINAL, code -> {
                    code.ldc(handle); // a JIT constant: the handle's chain inlines into this method
                    int slot = 1;
                    for (Class<?> p : type.parameterArray()) {
                        TypeKind kind = TypeKind.from(p);
                        code.loadLocal(kind, slot);
                        slot += kind.slotSize();
                    }
                    code.invokevirtual(METHOD_HANDLE, "invokeExact", desc);
                    code.return_(TypeKind.from(type.returnType()));
                }));
        try {
            MethodHandles.Lookup hidden = LOOKUP.defineHiddenClassWithClassData(bytes, exact, true);
            return face.cast(hidden.findConstructor(hidden.lookupClass(), MethodType.methodType(void.class)).invoke());
        } catch (Throwable e) {
            throw new IllegalStateException("cannot bind a " + face.getSimpleName() + " for " + target, e);
        }
    }
}
