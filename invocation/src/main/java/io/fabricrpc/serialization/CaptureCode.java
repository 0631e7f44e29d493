package io.fabricrpc.serialization;

import java.lang.classfile.ClassBuilder;
import java.lang.classfile.ClassFile;
import java.lang.classfile.CodeBuilder;
import java.lang.classfile.Opcode;
import java.lang.classfile.TypeKind;
import java.lang.constant.ClassDesc;
import java.lang.constant.ConstantDescs;
import java.lang.constant.DynamicConstantDesc;
import java.lang.constant.MethodTypeDesc;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Consumer;

/**
 * Generates, once per lambda class (sender) or definition (receiver), a tiny hidden class whose method moves the
 * captures with straight-line code: one {@link CaptureAccessors} call per primitive capture at its constant offset,
 * cut into static methods of a few captures each (the writer for C2's node budget, the invoker for C1's registers).
 *
 * <p>Why generated code rather than a composed method handle: a handle held in a field is opaque to the JIT, and a
 * handle composed per capture (fold/collect, one level each) is nested as deep as there are captures, past the
 * inlining depth of C2 (15) and C1 (9) beyond a few captures; 32 captures then ran partly interpreted through lambda
 * forms. Here the handles (a receiver's capture reads and implementation method) are loaded with {@code ldc} from
 * the class data: JIT constants, one level deep, so every call inlines into plain loads and stores. Hidden lambda
 * classes cannot be named from bytecode, so a sender's writer reads their private capture fields at their offsets,
 * as constants.
 * It also generates the sender lookup ({@link #senderLookup}): lambda class to {@link SenderFunction}, as constants.
 *
 * <p>The generated classes are named {@code io.fabricrpc.serialization.Generated*}; the root pom's JIT directives
 * force-inline the capture writers and the sender lookup ({@code GeneratedCaptureWriter*}, {@code
 * GeneratedSenderFunction*}): inlined into the code that built the lambda, they are what lets escape analysis
 * drop the lambda object.
 */
final class CaptureCode {
    /** Stores every primitive capture of {@code function} into {@code captures}, in record layout from 0. */
    interface CaptureWriter {
        void write(Object function, byte[] captures);
    }

    /** Reads the captures at {@code base} (objects from {@code objects}) and runs the implementation method. */
    interface Invoker {
        Object invoke(MemorySegment segment, long base, Object[] objects, Object argument);
    }

    private static final MethodHandles.Lookup LOOKUP = MethodHandles.lookup();
    private static final ClassDesc METHOD_HANDLE = ClassDesc.of(MethodHandle.class.getName());
    private static final ClassDesc SEGMENT = ClassDesc.of(MemorySegment.class.getName());
    /** The writer's type: {@code (Object function, byte[] captures)void}. */
    private static final MethodType WRITER_TYPE = MethodType.methodType(void.class, Object.class, byte[].class);
    private static final MethodTypeDesc WRITER_DESC = WRITER_TYPE.describeConstable().orElseThrow();
    /** A capture's copy: {@code (Object function, long field, byte[] captures, long at)void}. */
    private static final MethodTypeDesc COPY_DESC = MethodTypeDesc.of(ConstantDescs.CD_void, ConstantDescs.CD_Object,
            ConstantDescs.CD_long, ConstantDescs.CD_byte.arrayType(), ConstantDescs.CD_long);
    /** Captures per generated static method of a writer. */
    private static final int WRITER_GROUP = 8;
    /**
     * Captures per method of an invoker. C1 inlines every segment read whole, and 32 of them ran it out of virtual
     * registers: the invoker then stayed interpreted until C2, which some runs never scheduled. C2 inlines them back.
     */
    private static final int INVOKER_GROUP = 16;

    private CaptureCode() {
    }

    /**
     * A writer copying each of {@code fields} (primitive capture fields of {@code lambdaClass}) into
     * {@code captures[offsets[i]]}. It reads the fields at their offsets ({@link CaptureAccessors}): it must only be
     * given instances of {@code lambdaClass}, as the sender lookup guarantees.
     *
     * @param offsets byte offset of each capture in the record's capture area
     */
    static CaptureWriter writer(Class<?> lambdaClass, List<Field> fields, long[] offsets) {
        long[] fieldOffsets = new long[fields.size()];
        for (int i = 0; i < fieldOffsets.length; i++) {
            Field field = fields.get(i);
            if (field.getDeclaringClass() != lambdaClass || !field.getType().isPrimitive()) {
                throw new IllegalArgumentException(field + " is not a primitive capture field of " + lambdaClass);
            }
            fieldOffsets[i] = CaptureAccessors.fieldOffset(field);
        }
        int groups = (fieldOffsets.length + WRITER_GROUP - 1) / WRITER_GROUP;
        ClassDesc self = generatedName(CaptureWriter.class);
        ClassDesc accessors = CaptureAccessors.class.describeConstable().orElseThrow();
        // Straight-line code, a copy per capture at constant offsets, cut into one static method per WRITER_GROUP
        // captures. All of it must inline into the caller's loop for escape analysis to drop the lambda, and C2
        // stops inlining into a method past a node count (NodeCountInliningCutoff): with a getter handle and a
        // segment store per capture, a loop inlining two call paths of a 32-capture lambda hit it part-way through.
        // Slots of write: 0 this, 1 function, 2 captures; of a group: 0 function, 1 captures.
        return define(CaptureWriter.class, "write", WRITER_TYPE, List.of(), code -> {
            for (int g = 0; g < groups; g++) {
                code.aload(1).aload(2).invokestatic(self, "group" + g, WRITER_DESC);
            }
            code.return_();
        }, cls -> {
            for (int g = 0; g < groups; g++) {
                int from = g * WRITER_GROUP;
                int to = Math.min(fieldOffsets.length, from + WRITER_GROUP);
                cls.withMethodBody("group" + g, WRITER_DESC, ClassFile.ACC_PRIVATE | ClassFile.ACC_STATIC, code -> {
                    for (int i = from; i < to; i++) {
                        code.aload(0).loadConstant(fieldOffsets[i]).aload(1)
                                .loadConstant(CaptureAccessors.arrayOffset(offsets[i]))
                                .invokestatic(accessors, CaptureAccessors.name("copy", fields.get(i).getType()),
                                        COPY_DESC);
                    }
                    code.return_();
                });
            }
        });
    }

    /**
     * {@code (Object function)SenderFunction}: compares the function's class with {@code types} in order, returns
     * the matching sender (both loaded as constants), else {@link SenderFunction#miss}. See SenderFunction's
     * MAX_DISPATCHED for why.
     */
    static MethodHandle senderLookup(List<Class<?>> types, List<SenderFunction> senders) {
        List<Object> data = new ArrayList<>(2 * types.size());
        for (int i = 0; i < types.size(); i++) {
            data.add(types.get(i));
            data.add(senders.get(i));
        }
        ClassDesc sender = ClassDesc.of(SenderFunction.class.getName());
        MethodTypeDesc lookupDesc = MethodTypeDesc.of(sender, ConstantDescs.CD_Object);
        ClassDesc self = generatedName(SenderFunction.class);
        byte[] bytes = ClassFile.of().build(self, cls -> cls
                .withFlags(ClassFile.ACC_FINAL | ClassFile.ACC_SYNTHETIC)
                .withMethodBody("lookup", lookupDesc, ClassFile.ACC_STATIC, code -> {
                    // Slots: 0 function, 1 its class.
                    code.aload(0).invokevirtual(ConstantDescs.CD_Object, "getClass",
                            MethodTypeDesc.of(ConstantDescs.CD_Class)).astore(1);
                    for (int i = 0; i < types.size(); i++) {
                        int at = 2 * i;
                        code.aload(1).ldc(classDataAt(ConstantDescs.CD_Class, at));
                        code.ifThen(Opcode.IF_ACMPEQ, then -> then.ldc(classDataAt(sender, at + 1)).areturn());
                    }
                    code.aload(0).invokestatic(sender, "miss", lookupDesc).areturn();
                }));
        try {
            MethodHandles.Lookup hidden = LOOKUP.defineHiddenClassWithClassData(bytes,
                    Collections.unmodifiableList(data), true);
            return hidden.findStatic(hidden.lookupClass(), "lookup",
                    MethodType.methodType(SenderFunction.class, Object.class));
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot generate the sender lookup for " + types, e);
        }
    }

    /**
     * An invoker calling {@code impl(captures.., argument?)}, each primitive capture read at
     * {@code base + offsets[i]}, each object capture taken from {@code objects[objectIndex[i]]}, at most
     * {@value #INVOKER_GROUP} of them per generated method.
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
            data.add(type.isPrimitive() ? CaptureAccessors.reader(type) : null);
        }
        int n = captures.length;
        // Groups of INVOKER_GROUP captures, the first taking the remainder; each group but the first is read by a
        // static method that the previous one calls with the captures read so far (see INVOKER_GROUP).
        int groups = Math.max(1, (n + INVOKER_GROUP - 1) / INVOKER_GROUP);
        int[] start = new int[groups + 1];
        start[groups] = n;
        for (int g = groups - 1; g >= 1; g--) {
            start[g] = start[g + 1] - INVOKER_GROUP;
        }
        InvokerCode gen = new InvokerCode(impl.type().describeConstable().orElseThrow(), captures, offsets,
                objectIndex, arguments, start);
        MethodType type = ReceiverFunction.INVOKER_TYPE;
        return define(Invoker.class, "invoke", type, data, code -> gen.group(code, 0), cls -> {
            for (int g = 1; g < groups; g++) {
                int group = g;
                cls.withMethodBody("group" + g, gen.groupDesc(g), ClassFile.ACC_PRIVATE | ClassFile.ACC_STATIC,
                        code -> gen.group(code, group));
            }
        });
    }

    /** The code of an invoker's groups: group g reads captures {@code start[g] .. start[g+1]-1}. */
    private record InvokerCode(MethodTypeDesc implDesc, Class<?>[] captures, long[] offsets, int[] objectIndex,
                               int arguments, int[] start) {
        /** The type a capture is passed as: its own if primitive, else Object (as the adapted impl takes it). */
        private Class<?> passed(int i) {
            return captures[i].isPrimitive() ? captures[i] : Object.class;
        }

        /** Group g's static method: {@code (captures 0 .. start[g]-1, segment, base, objects, argument)Object}. */
        MethodTypeDesc groupDesc(int g) {
            List<ClassDesc> parameters = new ArrayList<>();
            for (int i = 0; i < start[g]; i++) {
                parameters.add(passed(i).describeConstable().orElseThrow());
            }
            parameters.addAll(List.of(SEGMENT, ConstantDescs.CD_long, ConstantDescs.CD_Object.arrayType(),
                    ConstantDescs.CD_Object));
            return MethodTypeDesc.of(ConstantDescs.CD_Object, parameters);
        }

        /**
         * Group 0 is the body of {@code invoke} (slots: 0 this, 1 segment, 2-3 base, 4 objects, 5 argument); group
         * g > 0 takes the captures read before it in its first slots, then segment, base, objects, argument.
         */
        void group(CodeBuilder code, int g) {
            boolean last = g == start.length - 2;
            if (last) {
                code.ldc(classDataAt(0));
            }
            int segment = g == 0 ? 1 : 0; // invoke's slot 0 is this; start[0] is 0, so it forwards nothing
            for (int i = 0; i < start[g]; i++) {
                TypeKind kind = TypeKind.from(passed(i));
                code.loadLocal(kind, segment);
                segment += kind.slotSize();
            }
            int base = segment + 1;
            int objects = segment + 3;
            int argument = segment + 4;
            for (int i = start[g]; i < start[g + 1]; i++) {
                Class<?> type = captures[i];
                if (type.isPrimitive()) {
                    code.ldc(classDataAt(i + 1)).aload(segment).lload(base).loadConstant(offsets[i]).ladd()
                            .invokevirtual(METHOD_HANDLE, "invokeExact", MethodTypeDesc.of(
                                    type.describeConstable().orElseThrow(), SEGMENT, ConstantDescs.CD_long));
                } else {
                    code.aload(objects).loadConstant(objectIndex[i]).aaload();
                }
            }
            if (last) {
                for (int a = 0; a < arguments; a++) {
                    code.aload(argument);
                }
                code.invokevirtual(METHOD_HANDLE, "invokeExact", implDesc);
            } else {
                code.aload(segment).lload(base).aload(objects).aload(argument)
                        .invokestatic(generatedName(Invoker.class), "group" + (g + 1), groupDesc(g + 1));
            }
            code.areturn();
        }
    }

    private static DynamicConstantDesc<Object> classDataAt(int index) {
        return classDataAt(METHOD_HANDLE, index);
    }

    /** Element {@code index} of the generated class's class data, of type {@code type}: a JIT constant. */
    private static DynamicConstantDesc<Object> classDataAt(ClassDesc type, int index) {
        return DynamicConstantDesc.ofNamed(ConstantDescs.BSM_CLASS_DATA_AT, ConstantDescs.DEFAULT_NAME, type, index);
    }

    static ClassDesc generatedName(Class<?> of) {
        return ClassDesc.of(CaptureCode.class.getPackageName() + ".Generated" + of.getSimpleName());
    }

    private static <T> T define(Class<T> face, String method, MethodType type, List<MethodHandle> data,
                                Consumer<CodeBuilder> body) {
        return define(face, method, type, data, body, cls -> { });
    }

    private static <T> T define(Class<T> face, String method, MethodType type, List<MethodHandle> data,
                                Consumer<CodeBuilder> body, Consumer<ClassBuilder> more) {
        byte[] bytes = ClassFile.of().build(generatedName(face), cls -> {
            cls.withFlags(ClassFile.ACC_FINAL | ClassFile.ACC_SYNTHETIC)
                    .withInterfaceSymbols(face.describeConstable().orElseThrow())
                    .withMethodBody(ConstantDescs.INIT_NAME, ConstantDescs.MTD_void, ClassFile.ACC_PUBLIC, code -> code
                            .aload(0)
                            .invokespecial(ConstantDescs.CD_Object, ConstantDescs.INIT_NAME, ConstantDescs.MTD_void)
                            .return_())
                    .withMethodBody(method, type.describeConstable().orElseThrow(),
                            ClassFile.ACC_PUBLIC | ClassFile.ACC_FINAL, body);
            more.accept(cls);
        });
        try {
            MethodHandles.Lookup hidden = LOOKUP.defineHiddenClassWithClassData(bytes,
                    Collections.unmodifiableList(data), true);
            return face.cast(hidden.findConstructor(hidden.lookupClass(), MethodType.methodType(void.class)).invoke());
        } catch (Throwable e) {
            throw new IllegalStateException("cannot generate a " + face.getSimpleName() + " for " + data, e);
        }
    }
}
