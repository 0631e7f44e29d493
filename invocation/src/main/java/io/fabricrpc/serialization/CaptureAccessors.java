package io.fabricrpc.serialization;

import static io.fabricrpc.serialization.CallRecordDescriptor.BYTE;
import static io.fabricrpc.serialization.CallRecordDescriptor.CHAR;
import static io.fabricrpc.serialization.CallRecordDescriptor.DOUBLE;
import static io.fabricrpc.serialization.CallRecordDescriptor.FLOAT;
import static io.fabricrpc.serialization.CallRecordDescriptor.INT;
import static io.fabricrpc.serialization.CallRecordDescriptor.LONG;
import static io.fabricrpc.serialization.CallRecordDescriptor.SHORT;

import org.agrona.UnsafeApi;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.lang.reflect.Field;
import java.nio.ByteOrder;

/**
 * Static accessors for one primitive capture in a call record, called by the code {@link CaptureCode} generates.
 * Little-endian and unaligned, as {@link CallRecordDescriptor} lays records out. Package-private: generated classes
 * live in this package. Receivers read records ({@code get}). Senders copy captures out of the lambda into a
 * {@link CapturedCall}'s byte array ({@code copy}), in the record's layout, with Agrona's {@link UnsafeApi}: a field
 * read and an array store at constant offsets, a few JIT nodes where a getter handle and a segment or VarHandle store
 * parse into dozens. C2 stops inlining into a method past a node count (NodeCountInliningCutoff); with handles and
 * segment stores it stopped part-way through a 32-capture writer where a caller's loop inlined two call paths, and
 * the lambda was allocated again. Escape analysis treats reads at constant field offsets as field reads.
 */
final class CaptureAccessors {
    private static final long BYTES_BASE = UnsafeApi.arrayBaseOffset(byte[].class);
    /** Little-endian longs of a byte array, for reading captures back (not in the caller's compilation). */
    static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private CaptureAccessors() {
    }

    /** {@code getLong}, {@code copyInt}, ...: the accessor {@code verb} ("get" or "copy") for {@code type}. */
    static String name(String verb, Class<?> type) {
        String t = type.getName();
        return verb + Character.toUpperCase(t.charAt(0)) + t.substring(1);
    }

    /** The receiver's read of a {@code type} capture: {@code get}, {@code (MemorySegment, long)T}. */
    static MethodHandle reader(Class<?> type) {
        MethodType methodType = MethodType.methodType(type, MemorySegment.class, long.class);
        try {
            return MethodHandles.lookup().findStatic(CaptureAccessors.class, name("get", type), methodType);
        } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException("no accessor for capture type " + type, e);
        }
    }

    static boolean getBoolean(MemorySegment s, long p) {
        return s.get(BYTE, p) != 0;
    }

    static byte getByte(MemorySegment s, long p) {
        return s.get(BYTE, p);
    }

    static char getChar(MemorySegment s, long p) {
        return s.get(CHAR, p);
    }

    static short getShort(MemorySegment s, long p) {
        return s.get(SHORT, p);
    }

    static int getInt(MemorySegment s, long p) {
        return s.get(INT, p);
    }

    static float getFloat(MemorySegment s, long p) {
        return s.get(FLOAT, p);
    }

    static long getLong(MemorySegment s, long p) {
        return s.get(LONG, p);
    }

    static double getDouble(MemorySegment s, long p) {
        return s.get(DOUBLE, p);
    }

    /** The offset of an instance field, for the generated writers' reads. */
    static long fieldOffset(Field field) {
        return UnsafeApi.objectFieldOffset(field);
    }

    /** The address offset of {@code captures[index]} in a byte array, for the generated writers' stores. */
    static long arrayOffset(long index) {
        return BYTES_BASE + index;
    }

    // copyT(function, field, captures, at): captures[at..] = function.field, little-endian. Generated writers call
    // them with the field offsets of their own lambda class, for instances of that class only (SenderFunction's
    // lookup selects the writer by the function's exact class), and with array offsets inside the capture area that
    // CapturedCall.capture has made room for: in bounds by construction, so no check per copy.

    static void copyBoolean(Object f, long field, byte[] b, long at) {
        UnsafeApi.putByte(b, at, UnsafeApi.getBoolean(f, field) ? (byte) 1 : (byte) 0);
    }

    static void copyByte(Object f, long field, byte[] b, long at) {
        UnsafeApi.putByte(b, at, UnsafeApi.getByte(f, field));
    }

    static void copyChar(Object f, long field, byte[] b, long at) {
        UnsafeApi.putCharUnaligned(b, at, UnsafeApi.getChar(f, field), false);
    }

    static void copyShort(Object f, long field, byte[] b, long at) {
        UnsafeApi.putShortUnaligned(b, at, UnsafeApi.getShort(f, field), false);
    }

    static void copyInt(Object f, long field, byte[] b, long at) {
        UnsafeApi.putIntUnaligned(b, at, UnsafeApi.getInt(f, field), false);
    }

    static void copyFloat(Object f, long field, byte[] b, long at) {
        UnsafeApi.putIntUnaligned(b, at, Float.floatToRawIntBits(UnsafeApi.getFloat(f, field)), false);
    }

    static void copyLong(Object f, long field, byte[] b, long at) {
        UnsafeApi.putLongUnaligned(b, at, UnsafeApi.getLong(f, field), false);
    }

    static void copyDouble(Object f, long field, byte[] b, long at) {
        UnsafeApi.putLongUnaligned(b, at, Double.doubleToRawLongBits(UnsafeApi.getDouble(f, field)), false);
    }
}
