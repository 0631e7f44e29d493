package io.fabricrpc.serialization;

import static io.fabricrpc.serialization.CallRecordDescriptor.BYTE;
import static io.fabricrpc.serialization.CallRecordDescriptor.CHAR;
import static io.fabricrpc.serialization.CallRecordDescriptor.DOUBLE;
import static io.fabricrpc.serialization.CallRecordDescriptor.FLOAT;
import static io.fabricrpc.serialization.CallRecordDescriptor.INT;
import static io.fabricrpc.serialization.CallRecordDescriptor.LONG;
import static io.fabricrpc.serialization.CallRecordDescriptor.SHORT;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Method handles that move one primitive capture between a segment and a typed value, at a constant offset from a
 * base position, with exact types so that nothing is boxed. Building blocks of the composed per-function handles.
 */
final class CaptureHandles {
    private static final MethodHandle ADD;

    static {
        try {
            ADD = MethodHandles.lookup().findStatic(CaptureHandles.class, "add",
                    MethodType.methodType(long.class, long.class, long.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private CaptureHandles() {
    }

    /** {@code (MemorySegment, long base)T}: reads a {@code type} value at {@code base + offset}. */
    static MethodHandle reader(Class<?> type, long offset) {
        MethodHandle get = accessor("get", type, MethodType.methodType(type, MemorySegment.class, long.class));
        return MethodHandles.filterArguments(get, 1, MethodHandles.insertArguments(ADD, 1, offset));
    }

    /** {@code (MemorySegment, long base, T)void}: writes a {@code type} value at {@code base + offset}. */
    static MethodHandle writer(Class<?> type, long offset) {
        MethodHandle put = accessor("put", type,
                MethodType.methodType(void.class, MemorySegment.class, long.class, type));
        return MethodHandles.filterArguments(put, 1, MethodHandles.insertArguments(ADD, 1, offset));
    }

    private static MethodHandle accessor(String verb, Class<?> type, MethodType methodType) {
        String name = verb + Character.toUpperCase(type.getName().charAt(0)) + type.getName().substring(1);
        try {
            return MethodHandles.lookup().findStatic(CaptureHandles.class, name, methodType);
        } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException("no accessor for capture type " + type, e);
        }
    }

    private static long add(long base, long offset) {
        return base + offset;
    }

    private static boolean getBoolean(MemorySegment s, long p) {
        return s.get(BYTE, p) != 0;
    }

    private static byte getByte(MemorySegment s, long p) {
        return s.get(BYTE, p);
    }

    private static char getChar(MemorySegment s, long p) {
        return s.get(CHAR, p);
    }

    private static short getShort(MemorySegment s, long p) {
        return s.get(SHORT, p);
    }

    private static int getInt(MemorySegment s, long p) {
        return s.get(INT, p);
    }

    private static float getFloat(MemorySegment s, long p) {
        return s.get(FLOAT, p);
    }

    private static long getLong(MemorySegment s, long p) {
        return s.get(LONG, p);
    }

    private static double getDouble(MemorySegment s, long p) {
        return s.get(DOUBLE, p);
    }

    private static void putBoolean(MemorySegment s, long p, boolean v) {
        s.set(BYTE, p, v ? (byte) 1 : (byte) 0);
    }

    private static void putByte(MemorySegment s, long p, byte v) {
        s.set(BYTE, p, v);
    }

    private static void putChar(MemorySegment s, long p, char v) {
        s.set(CHAR, p, v);
    }

    private static void putShort(MemorySegment s, long p, short v) {
        s.set(SHORT, p, v);
    }

    private static void putInt(MemorySegment s, long p, int v) {
        s.set(INT, p, v);
    }

    private static void putFloat(MemorySegment s, long p, float v) {
        s.set(FLOAT, p, v);
    }

    private static void putLong(MemorySegment s, long p, long v) {
        s.set(LONG, p, v);
    }

    private static void putDouble(MemorySegment s, long p, double v) {
        s.set(DOUBLE, p, v);
    }
}
