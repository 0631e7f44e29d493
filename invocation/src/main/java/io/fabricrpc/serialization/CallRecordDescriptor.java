package io.fabricrpc.serialization;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Wire format of call records and result records, shared by {@link CallEncoder}, {@link CallDecoder} and
 * {@link ResultCodec}. Records are self-delimiting, so a messenger can pack many back to back in a chunk and
 * skip one that failed ({@link #recordEnd}).
 *
 * <h2>Call record</h2>
 * Byte-granular, no alignment; every field starts right after the previous one.
 * <pre>
 *  +-------------------------------------------------------------------+
 *  | tag         varint   functionId &lt;&lt; 1 | D            1..3 bytes    |
 *  +-------------------------------------------------------------------+
 *  | bodyLength  varint   bytes after this field          1..5 bytes   |
 *  +===================================================================+ &lt;- body
 *  | definition           only when D = 1: first call of this          |
 *  |                      function on this link (layout below)         |
 *  +-------------------------------------------------------------------+
 *  | primitive captures   in capture order, fixed width,               |
 *  |                      little-endian: boolean, byte 1;              |
 *  |                      char, short 2; int, float 4; long, double 8  |
 *  +-------------------------------------------------------------------+
 *  | object captures      in capture order, each Kryo                  |
 *  |                      writeClassAndObject: registered class id     |
 *  |                      varint (0 = null), then the object's fields  |
 *  +-------------------------------------------------------------------+
 * </pre>
 * Varints are unsigned LEB128 (7 bits per byte, low group first, high bit set when more bytes follow), at most
 * {@link #MAX_VARINT_LENGTH} bytes, values below 2<sup>31</sup>; writers emit the minimal form. Function ids are
 * assigned per link and direction by the sender, from 0, in first-use order, and are below
 * {@link #MAX_FUNCTIONS_PER_LINK}. Primitive captures precede object captures so that their offsets from the start
 * of the captures are constants of the function; the receiver reads them there without parsing.
 *
 * <h3>Definition (once per function and link)</h3>
 * <pre>
 *  +-------------------------------------------------------------------+
 *  | implMethodKind  u8   MethodHandleInfo.REF_* kind                  |
 *  +-------------------------------------------------------------------+
 *  | 9 strings, each a varint byte length then UTF-8, in this order:   |
 *  |   capturingClass, functionalInterfaceClass,                       |
 *  |   functionalInterfaceMethodName, functionalInterfaceMethodSignature|
 *  |   implClass, implMethodName, implMethodSignature,                 |
 *  |   instantiatedMethodType, captureTypes                            |
 *  +-------------------------------------------------------------------+
 * </pre>
 * Class names are JVM internal names ({@code a/b/C}); signatures are method descriptors; {@code captureTypes} is a
 * method descriptor {@code (T1..Tn)V} listing the captured values' types. These are the fields of
 * {@link java.lang.invoke.SerializedLambda}: the receiver checks them against the capturing class's own
 * {@code $deserializeLambda$} once, then never sees a class name again for this function on this link.
 *
 * <h2>Per-call overhead</h2>
 * A steady-state call (definition already sent) costs {@code varint(tag) + varint(bodyLength)} bytes beyond its
 * captured values: {@value #STEADY_STATE_OVERHEAD_BYTES} bytes for the first 64 functions of a link and bodies up to
 * 127 bytes; at most 4 bytes for the first 8192 functions and bodies below 16 KiB; at most 6 bytes for any function
 * id and bodies below 2 MiB.
 * Object captures add Kryo's own 1-byte class id (or null marker) per object, for classes registered among the first
 * 126 ids. Measured by {@code CallCodecTest#steadyStateOverheadIsTwoBytes}.
 *
 * <h2>Result record</h2>
 * <pre>
 *  +-------------------------------------------------------------------+
 *  | status      u8       RESULT_VALUE or RESULT_FAILURE               |
 *  +-------------------------------------------------------------------+
 *  | bodyLength  varint   bytes after this field          1..5 bytes   |
 *  +===================================================================+ &lt;- body
 *  | RESULT_VALUE:   Kryo writeClassAndObject(value)                   |
 *  | RESULT_FAILURE: 2 strings (varint length + UTF-8): exception      |
 *  |                 class name, message (possibly shortened)          |
 *  +-------------------------------------------------------------------+
 * </pre>
 */
public final class CallRecordDescriptor {
    /** Low bit of the tag: set when the record carries the function's definition. */
    public static final int DEFINITION_FLAG = 1;
    /** The function id is the tag shifted right by this many bits. */
    public static final int FUNCTION_ID_SHIFT = 1;
    /** Function ids on one link are below this bound (the receiver's id table is bounded by it). */
    public static final int MAX_FUNCTIONS_PER_LINK = 1 << 16;
    /** Longest varint accepted (32-bit values). */
    public static final int MAX_VARINT_LENGTH = 5;
    /** Bytes beyond the captured values of a steady-state call (function id &lt; 64, body &lt; 128 bytes). */
    public static final int STEADY_STATE_OVERHEAD_BYTES = 2;

    /** Result status: the body is the Kryo-encoded value. */
    public static final byte RESULT_VALUE = 0;
    /** Result status: the body names the exception the remote function threw. */
    public static final byte RESULT_FAILURE = 1;
    /** Offset of the result status byte; the body length varint follows it. */
    public static final int RESULT_STATUS_OFFSET = 0;

    static final ValueLayout.OfBoolean BOOLEAN = ValueLayout.JAVA_BOOLEAN;
    static final ValueLayout.OfByte BYTE = ValueLayout.JAVA_BYTE;
    static final ValueLayout.OfChar CHAR = ValueLayout.JAVA_CHAR_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfDouble DOUBLE = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    /** The handles (segment, offset) of {@link #BYTE} and {@link #LONG}: one call level fewer than a segment's set. */
    static final VarHandle BYTE_AT = BYTE.varHandle();
    static final VarHandle LONG_AT = LONG.varHandle();

    private CallRecordDescriptor() {
    }

    /** Wire width of a primitive capture of the given type. */
    public static int primitiveWidth(Class<?> type) {
        if (type == boolean.class || type == byte.class) {
            return 1;
        }
        if (type == char.class || type == short.class) {
            return 2;
        }
        if (type == int.class || type == float.class) {
            return 4;
        }
        if (type == long.class || type == double.class) {
            return 8;
        }
        throw new IllegalArgumentException("not a primitive value type: " + type);
    }

    /**
     * Where each primitive capture lies, as an offset from the first primitive capture's byte: the primitives in
     * capture order, packed with their {@link #primitiveWidth}s; object captures (-1 here) follow them, Kryo-written.
     * The encoder and the decoder both lay captures out by this one rule.
     *
     * @return {@code captures.length + 1} values: the offset of each capture, then the bytes of all primitives
     */
    static long[] primitiveOffsets(Class<?>[] captures) {
        long[] offsets = new long[captures.length + 1];
        long bytes = 0;
        for (int i = 0; i < captures.length; i++) {
            offsets[i] = captures[i].isPrimitive() ? bytes : -1;
            bytes += captures[i].isPrimitive() ? primitiveWidth(captures[i]) : 0;
        }
        offsets[captures.length] = bytes;
        return offsets;
    }

    /**
     * Returns the offset just past the call record starting at {@code offset}, from its header alone.
     *
     * @throws CallDecodingException if the header is malformed or the record extends beyond {@code limit}
     */
    public static long recordEnd(MemorySegment segment, long offset, long limit) {
        return recordEnd(segment, offset, limit, "");
    }

    static long recordEnd(MemorySegment segment, long offset, long limit, String context) {
        long tag = readVarInt(segment, offset, limit);
        if (tag < 0) {
            throw new CallDecodingException(context + "malformed call record tag", offset, limit, -1);
        }
        return bodyEnd(segment, offset, offset + varIntLength(tag), limit, context, "call");
    }

    /**
     * Returns the offset just past the result record starting at {@code offset}.
     *
     * @throws CallDecodingException if the header is malformed or the record extends beyond {@code limit}
     */
    public static long resultRecordEnd(MemorySegment segment, long offset, long limit) {
        if (limit - offset < 1) {
            throw new CallDecodingException("truncated result record: no status byte", offset, limit, -1);
        }
        return bodyEnd(segment, offset, offset + 1, limit, "", "result");
    }

    private static long bodyEnd(MemorySegment segment, long recordStart, long lengthAt, long limit, String context,
                                String kind) {
        long length = readVarInt(segment, lengthAt, limit);
        if (length < 0) {
            throw new CallDecodingException(context + "malformed " + kind + " record length", recordStart, limit, -1);
        }
        long end = lengthAt + varIntLength(length) + varIntValue(length);
        if (end > limit) {
            throw new CallDecodingException(context + "truncated " + kind + " record: body of " + varIntValue(length)
                    + " bytes ends at " + end + ", beyond the limit", recordStart, limit, -1);
        }
        return end;
    }

    // ---- varint helpers: results are packed as (length << 32 | value) so decoding allocates nothing ----

    /** Bytes needed to encode {@code value} (0 ≤ value &lt; 2<sup>31</sup>) as a varint. */
    static int varIntSize(long value) {
        if (value < 0 || value > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("varint out of range: " + value);
        }
        if (value < 1 << 7) {
            return 1;
        }
        if (value < 1 << 14) {
            return 2;
        }
        if (value < 1 << 21) {
            return 3;
        }
        return value < 1 << 28 ? 4 : 5;
    }

    /**
     * Reads a varint at {@code position}, not reading at or beyond {@code limit}.
     *
     * @return {@code length << 32 | value}, or -1 if truncated, longer than 5 bytes or not below 2<sup>31</sup>
     */
    static long readVarInt(MemorySegment segment, long position, long limit) {
        long value = 0;
        for (int i = 0; i < MAX_VARINT_LENGTH; i++) {
            if (position + i >= limit) {
                return -1;
            }
            int b = segment.get(BYTE, position + i);
            value |= (long) (b & 0x7F) << (7 * i);
            if ((b & 0x80) == 0) {
                return value > Integer.MAX_VALUE ? -1 : (long) (i + 1) << 32 | value;
            }
        }
        return -1;
    }

    static int varIntLength(long packed) {
        return (int) (packed >>> 32);
    }

    static int varIntValue(long packed) {
        return (int) packed;
    }

    /** Writes {@code value} as a minimal varint at {@code position}; returns the number of bytes written. */
    static int writeVarInt(MemorySegment segment, long position, int value) {
        int i = 0;
        int v = value;
        while ((v & ~0x7F) != 0) {
            segment.set(BYTE, position + i++, (byte) (v & 0x7F | 0x80));
            v >>>= 7;
        }
        segment.set(BYTE, position + i++, (byte) v);
        return i;
    }
}
