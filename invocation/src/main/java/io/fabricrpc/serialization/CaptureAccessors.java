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
 * Static accessors for one primitive capture in a call record, called by the code {@link CaptureCode} generates.
 * Little-endian and unaligned, as {@link CallRecordDescriptor} lays records out. Package-private: generated classes
 * live in this package.
 */
final class CaptureAccessors {
    private CaptureAccessors() {
    }

    /** {@code getLong}, {@code putInt}, ...: the accessor {@code verb} ("get" or "put") for {@code type}. */
    static String name(String verb, Class<?> type) {
        String t = type.getName();
        return verb + Character.toUpperCase(t.charAt(0)) + t.substring(1);
    }

    /** {@code get}: {@code (MemorySegment, long)T}; {@code put}: {@code (MemorySegment, long, T)void}. */
    static MethodHandle handle(String verb, Class<?> type) {
        MethodType methodType = verb.equals("get") ? MethodType.methodType(type, MemorySegment.class, long.class)
                : MethodType.methodType(void.class, MemorySegment.class, long.class, type);
        try {
            return MethodHandles.lookup().findStatic(CaptureAccessors.class, name(verb, type), methodType);
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

    static void putBoolean(MemorySegment s, long p, boolean v) {
        s.set(BYTE, p, v ? (byte) 1 : (byte) 0);
    }

    static void putByte(MemorySegment s, long p, byte v) {
        s.set(BYTE, p, v);
    }

    static void putChar(MemorySegment s, long p, char v) {
        s.set(CHAR, p, v);
    }

    static void putShort(MemorySegment s, long p, short v) {
        s.set(SHORT, p, v);
    }

    static void putInt(MemorySegment s, long p, int v) {
        s.set(INT, p, v);
    }

    static void putFloat(MemorySegment s, long p, float v) {
        s.set(FLOAT, p, v);
    }

    static void putLong(MemorySegment s, long p, long v) {
        s.set(LONG, p, v);
    }

    static void putDouble(MemorySegment s, long p, double v) {
        s.set(DOUBLE, p, v);
    }
}
