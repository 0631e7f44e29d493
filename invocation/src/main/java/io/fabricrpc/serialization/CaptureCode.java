package io.fabricrpc.serialization;

import java.lang.classfile.ClassFile;
import java.lang.classfile.CodeBuilder;
import java.lang.constant.ClassDesc;
import java.lang.constant.ConstantDescs;
import java.lang.constant.DynamicConstantDesc;
import java.lang.constant.MethodTypeDesc;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Consumer;

/**
 * Generates, once per lambda class (sender) or definition (receiver), a tiny hidden class whose one method moves the
 * captures with straight-line code: one {@link CaptureAccessors} call per primitive capture at its constant offset.
 *
 * <p>Why generated code rather than a composed method handle: a handle held in a field is opaque to the JIT, and a
 * handle composed per capture (fold/collect, one level each) is nested as deep as there are captures, past the
 * inlining depth of C2 (15) and C1 (9) beyond a few captures; 32 captures then ran partly interpreted through lambda
 * forms. Here the only handles are the capture getters and the implementation method, each loaded with {@code ldc}
 * from the class data: JIT constants, one level deep, so every call inlines into plain loads and stores.
 * (Hidden lambda classes cannot be named from bytecode, so their private fields are reached through getters.)
 */
final class CaptureCode {
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
    private static final ClassDesc SEGMENT = ClassDesc.of(MemorySegment.class.getName());
    /** The writer's type, and each capture's store: {@code (Object function, MemorySegment segment, long at)void}. */
    private static final MethodType WRITER_TYPE =
            MethodType.methodType(void.class, Object.class, MemorySegment.class, long.class);
    private static final MethodTypeDesc WRITER_DESC = WRITER_TYPE.describeConstable().orElseThrow();

    private CaptureCode() {
    }

    /**
     * A writer storing {@code getters[i].invoke(function)} at {@code base + offsets[i]}.
     *
     * @param getters {@code (Object)T} per primitive capture, {@code T} its primitive type
     * @param offsets byte offset of each capture from the record's capture base
     */
    static CaptureWriter writer(List<MethodHandle> getters, long[] offsets) {
        List<MethodHandle> stores = new ArrayList<>(getters.size());
        for (MethodHandle getter : getters) {
            // put(segment, position, getter(function)), reordered to (function, segment, position)
            MethodHandle put = CaptureAccessors.handle("put", getter.type().returnType());
            stores.add(MethodHandles.permuteArguments(MethodHandles.filterArguments(put, 2, getter), WRITER_TYPE,
                    1, 2, 0));
        }
        // Slots: 0 this, 1 function, 2 segment, 3-4 base.
        return define(CaptureWriter.class, "write", WRITER_TYPE, stores, code -> {
            for (int i = 0; i < offsets.length; i++) {
                code.ldc(classDataAt(i)).aload(1).aload(2).lload(3).loadConstant(offsets[i]).ladd()
                        .invokevirtual(METHOD_HANDLE, "invokeExact", WRITER_DESC);
            }
            code.return_();
        });
    }

    /**
     * An invoker calling {@code impl(captures.., argument?)}, each primitive capture read at
     * {@code base + offsets[i]}, each object capture taken from {@code objects[objectIndex[i]]}.
     *
     * @param impl        the implementation, adapted to return Object and to take Object for object captures and for
     *                    the argument; primitive captures keep their exact type
     * @param captures    the capture types in order
     * @param arguments   0 or 1: whether the shape passes the argument
     */
    static Invoker invoker(MethodHandle impl, Class<?>[] captures, long[] offsets, int[] objectIndex, int arguments) {
        List<MethodHandle> data = new ArrayList<>();
        data.add(impl);
        for (Class<?> type : captures) {
            data.add(type.isPrimitive() ? CaptureAccessors.handle("get", type) : null);
        }
        MethodTypeDesc implDesc = impl.type().describeConstable().orElseThrow();
        // Slots: 0 this, 1 segment, 2-3 base, 4 objects, 5 argument.
        return define(Invoker.class, "invoke", ReceiverFunction.INVOKER_TYPE, data, code -> {
            code.ldc(classDataAt(0));
            for (int i = 0; i < captures.length; i++) {
                Class<?> type = captures[i];
                if (type.isPrimitive()) {
                    code.ldc(classDataAt(i + 1)).aload(1).lload(2).loadConstant(offsets[i]).ladd()
                            .invokevirtual(METHOD_HANDLE, "invokeExact", MethodTypeDesc.of(
                                    type.describeConstable().orElseThrow(), SEGMENT, ConstantDescs.CD_long));
                } else {
                    code.aload(4).loadConstant(objectIndex[i]).aaload();
                }
            }
            for (int a = 0; a < arguments; a++) {
                code.aload(5);
            }
            code.invokevirtual(METHOD_HANDLE, "invokeExact", implDesc);
            code.areturn();
        });
    }

    private static DynamicConstantDesc<MethodHandle> classDataAt(int index) {
        return DynamicConstantDesc.ofNamed(ConstantDescs.BSM_CLASS_DATA_AT, ConstantDescs.DEFAULT_NAME,
                METHOD_HANDLE, index);
    }

    private static <T> T define(Class<T> face, String method, MethodType type, List<MethodHandle> data,
                                Consumer<CodeBuilder> body) {
        ClassDesc self = ClassDesc.of(CaptureCode.class.getPackageName() + ".Generated" + face.getSimpleName());
        byte[] bytes = ClassFile.of().build(self, cls -> cls
                .withFlags(ClassFile.ACC_FINAL | ClassFile.ACC_SYNTHETIC)
                .withInterfaceSymbols(face.describeConstable().orElseThrow())
                .withMethodBody(ConstantDescs.INIT_NAME, ConstantDescs.MTD_void, ClassFile.ACC_PUBLIC, code -> code
                        .aload(0)
                        .invokespecial(ConstantDescs.CD_Object, ConstantDescs.INIT_NAME, ConstantDescs.MTD_void)
                        .return_())
                .withMethodBody(method, type.describeConstable().orElseThrow(),
                        ClassFile.ACC_PUBLIC | ClassFile.ACC_FINAL, body));
        try {
            MethodHandles.Lookup hidden = LOOKUP.defineHiddenClassWithClassData(bytes, Collections.unmodifiableList(data), true);
            return face.cast(hidden.findConstructor(hidden.lookupClass(), MethodType.methodType(void.class)).invoke());
        } catch (Throwable e) {
            throw new IllegalStateException("cannot generate a " + face.getSimpleName() + " for " + data, e);
        }
    }
}
