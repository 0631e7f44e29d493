package io.fabricrpc.serialization;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.SerializedLambda;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * What the first call of a function on a link carries: the fields of {@link SerializedLambda} plus the captured
 * values' types. Wire layout in {@link CallRecordDescriptor}.
 */
record FunctionDefinition(
        int implMethodKind,
        String capturingClass,
        String functionalInterfaceClass,
        String functionalInterfaceMethodName,
        String functionalInterfaceMethodSignature,
        String implClass,
        String implMethodName,
        String implMethodSignature,
        String instantiatedMethodType,
        String captureTypes) {

    /** Longest string accepted in a definition; bounds what a corrupt length can make the receiver allocate. */
    static final int MAX_STRING_BYTES = 4096;

    static FunctionDefinition of(SerializedLambda lambda, String captureTypes) {
        return new FunctionDefinition(lambda.getImplMethodKind(), lambda.getCapturingClass(),
                lambda.getFunctionalInterfaceClass(), lambda.getFunctionalInterfaceMethodName(),
                lambda.getFunctionalInterfaceMethodSignature(), lambda.getImplClass(), lambda.getImplMethodName(),
                lambda.getImplMethodSignature(), lambda.getInstantiatedMethodType(), captureTypes);
    }

    /** Binary (dotted) name of the capturing class. */
    String capturingClassName() {
        return capturingClass.replace('/', '.');
    }

    private List<String> strings() {
        return List.of(capturingClass, functionalInterfaceClass, functionalInterfaceMethodName,
                functionalInterfaceMethodSignature, implClass, implMethodName, implMethodSignature,
                instantiatedMethodType, captureTypes);
    }

    byte[] toBytes() {
        List<byte[]> encoded = new ArrayList<>();
        int size = 1;
        for (String s : strings()) {
            byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
            if (bytes.length > MAX_STRING_BYTES) {
                throw new IllegalArgumentException("definition string longer than " + MAX_STRING_BYTES + " bytes: " + s);
            }
            encoded.add(bytes);
            size += CallRecordDescriptor.varIntSize(bytes.length) + bytes.length;
        }
        byte[] out = new byte[size];
        MemorySegment segment = MemorySegment.ofArray(out);
        int position = 0;
        segment.set(CallRecordDescriptor.BYTE, position++, (byte) implMethodKind);
        for (byte[] bytes : encoded) {
            position += CallRecordDescriptor.writeVarInt(segment, position, bytes.length);
            MemorySegment.copy(bytes, 0, segment, CallRecordDescriptor.BYTE, position, bytes.length);
            position += bytes.length;
        }
        return out;
    }

    /**
     * Parses a definition from {@code [position, limit)}.
     *
     * @return the definition and, through {@code end[0]}, the offset just past it
     * @throws IllegalArgumentException describing what is malformed
     */
    static FunctionDefinition read(MemorySegment segment, long position, long limit, long[] end) {
        if (position >= limit) {
            throw new IllegalArgumentException("definition truncated before its method kind");
        }
        int kind = segment.get(CallRecordDescriptor.BYTE, position++) & 0xFF;
        String[] s = new String[9];
        for (int i = 0; i < s.length; i++) {
            long packed = CallRecordDescriptor.readVarInt(segment, position, limit);
            if (packed < 0) {
                throw new IllegalArgumentException("definition string " + i + " has a malformed length at " + position);
            }
            int length = CallRecordDescriptor.varIntValue(packed);
            position += CallRecordDescriptor.varIntLength(packed);
            if (length > MAX_STRING_BYTES || position + length > limit) {
                throw new IllegalArgumentException("definition string " + i + " of " + length
                        + " bytes at " + position + " exceeds the record (limit " + limit + ")");
            }
            byte[] bytes = segment.asSlice(position, length).toArray(CallRecordDescriptor.BYTE);
            s[i] = new String(bytes, StandardCharsets.UTF_8);
            position += length;
        }
        end[0] = position;
        return new FunctionDefinition(kind, s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8]);
    }
}
