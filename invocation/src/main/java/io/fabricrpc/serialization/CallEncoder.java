package io.fabricrpc.serialization;

import io.fabricrpc.api.SerializationRegistry;

import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.io.KryoBufferOverflowException;
import io.fabricrpc.api.LocalRegion;

import java.io.Serializable;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Objects;

/**
 * Sender side of one link and direction: encodes remote functions (lambdas or method references of the
 * {@code io.fabricrpc.api} interfaces) into call records ({@link CallRecordDescriptor}).
 *
 * <p>The first call of a function carries its definition and gets the next function id of this link; later calls
 * carry only the id, the primitive captures raw and the object captures through Kryo. In steady state, encoding a
 * function whose captures are all primitive allocates nothing, provided the same {@link MemorySegment} instance is
 * passed each time (e.g. the whole chunk, with offsets): its ByteBuffer view is cached per instance.
 *
 * <p>Every record this encoder returns must reach the receiving {@link CallDecoder}, in order: a record that
 * carried a definition and was dropped leaves the receiver unable to decode later calls of that function (call
 * {@link #reset()} and reset the decoder to start over).
 *
 * <p>Not thread-safe, by design: one encoder per sending thread and destination, like Seriema's messengers.
 */
public final class CallEncoder {
    /** Returned by {@link #encode} when the record does not fit before {@code limit}; nothing was committed. */
    public static final int DOES_NOT_FIT = -1;

    private static final int[] NO_IDS = new int[0];

    private final SerializationRegistry registry;
    private final String link;
    private final KryoRegistry.FabricKryo kryo;
    private final SegmentOutput output = new SegmentOutput();
    /** Function id + 1 per {@link SenderFunction#index}; 0 means no id on this link yet. */
    private int[] idPlusOneByIndex = NO_IDS;
    private int nextId;
    private Object[] objects = new Object[4];
    /** Takes calls apart for {@link #encode(Serializable, MemorySegment, long, long)}; created on first use. */
    private CapturedCall ownCall;
    /*
     * The last function this encoder wrote as a primitives-only call with an id: its record is a constant prefix
     * (tag and body-length varints) followed by the raw captures, so a repeat call of it skips the id lookup and the
     * size computations. A per-encoder monomorphic cache, as senders mostly repeat one function.
     */
    private SenderFunction fastSender;
    private long fastPrefix; // prefix bytes, first byte lowest
    private int fastPrefixSize;
    private int fastLength;

    /**
     * Creates the encoder of one link and direction, with its own Kryo instance.
     *
     * @param registry the registry both ends built identically
     * @param link     name of the link and direction, used in error messages only
     */
    public CallEncoder(SerializationRegistry registry, String link) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.link = Objects.requireNonNull(link, "link");
        this.kryo = KryoRegistry.newKryo(registry);
    }

    /**
     * Encodes one call of {@code function} into {@code segment[offset, limit)}.
     *
     * <p>Bytes in that range may be overwritten when the result is {@link #DOES_NOT_FIT} or an exception is thrown;
     * when a record is returned, every byte past it that encoding wrote is zero again (a sender encodes into zeroed
     * memory its receiver polls, where a stray byte would read as the next header). The encoder's state changes only
     * when a record is returned.
     *
     * @return the record length in bytes (the record occupies {@code [offset, offset + length)}), or
     *         {@link #DOES_NOT_FIT} if it needs more than {@code limit - offset} bytes
     * @throws UnregisteredClassException   if a captured object, or an object reachable from one, is of an
     *                                      unregistered class (top-level captures are checked before anything is
     *                                      written)
     * @throws FunctionNotAllowedException  if the registry does not allow the function's capturing class
     * @throws IllegalArgumentException     if {@code function} is not a serializable lambda or method reference of
     *                                      an {@code io.fabricrpc.api} interface, or the range is outside the segment
     * @throws SerializationException       if Kryo fails on a captured object for another reason
     */
    public int encode(Serializable function, MemorySegment segment, long offset, long limit) {
        Objects.requireNonNull(function, "function");
        CapturedCall call = ownCall;
        if (call == null) {
            call = new CapturedCall();
            ownCall = call;
        }
        call.capture(function);
        try {
            return encode(call, segment, offset, limit);
        } finally {
            call.clear();
        }
    }

    /**
     * Encodes one call, taken apart beforehand by {@link CapturedCall#capture}, into {@code segment[offset, limit)};
     * the same record, results and failures as {@link #encode(Serializable, MemorySegment, long, long)}. The call
     * may be encoded again (e.g. into a fresh chunk) after a {@link #DOES_NOT_FIT}.
     */
    public int encode(CapturedCall call, MemorySegment segment, long offset, long limit) {
        checkRange(segment, offset, limit);
        assert isPlainNative(segment);
        SenderFunction sender = call.sender;
        if (sender == null) {
            throw new IllegalStateException("link " + link + ": no captured call to encode");
        }
        if (sender == fastSender) {
            if (fastLength > limit - offset) {
                return DOES_NOT_FIT;
            }
            writeKnown(call, segment, offset);
            return fastLength;
        }
        return encodeGeneral(call, sender, segment, offset, limit);
    }

    /**
     * The length {@link #encode(CapturedCall, MemorySegment, long, long)} would return for {@code call}, when this
     * encoder knows it without encoding (a repeat call of the last primitives-only function it encoded); -1 otherwise.
     */
    public int knownLength(CapturedCall call) {
        return call.sender == fastSender && fastSender != null ? fastLength : -1;
    }

    /**
     * Encodes {@code call}, whose {@link #knownLength} is positive, at {@code offset}: the same record as
     * {@link #encode(CapturedCall, MemorySegment, long, long)}. The caller has checked the room.
     */
    public void writeKnown(CapturedCall call, MemorySegment segment, long offset) {
        assert call.sender == fastSender && fastSender != null : "writeKnown without a known length";
        assert isPlainNative(segment);
        // The repeat call's record: its constant prefix, then the captures. Kept in this method, and the stores go
        // straight to the VarHandle, so that the JDK's checks under them stay within C2's inlining depth.
        if (fastLength >= Long.BYTES) {
            // One store for the whole prefix; the captures, copied next, overwrite the bytes past it.
            CallRecordDescriptor.LONG_AT.set(segment, offset, fastPrefix);
        } else {
            for (int i = 0; i < fastPrefixSize; i++) {
                CallRecordDescriptor.BYTE_AT.set(segment, offset + i, (byte) (fastPrefix >>> (i << 3)));
            }
        }
        copyCaptures(call.captures, segment, offset + fastPrefixSize, fastLength - fastPrefixSize);
    }

    /**
     * Every caller encodes into plain native memory: one heap segment makes the record stores polymorphic, and all
     * call paths of the process take the slow path (a 3x loss, measured); a mapped segment next to arena memory made
     * them bimorphic (send and trad beside write: 1.4x to 2x, measured). For assertions: throws with the segment.
     */
    private static boolean isPlainNative(MemorySegment segment) {
        if (!LocalRegion.isPlainNative(segment)) {
            throw new AssertionError("calls are encoded into plain native segments only, got "
                    + segment.getClass().getName() + " " + segment);
        }
        return true;
    }

    /** Copies {@code bytes} of captures; whole longs one by one up to a line, where a bulk copy costs more. */
    private static void copyCaptures(byte[] captures, MemorySegment segment, long at, int bytes) {
        if (bytes <= 64 && (bytes & 7) == 0) {
            for (int i = 0; i < bytes; i += Long.BYTES) {
                CallRecordDescriptor.LONG_AT.set(segment, at + i, (long) CaptureAccessors.LONGS.get(captures, i));
            }
        } else {
            MemorySegment.copy(captures, 0, segment, CallRecordDescriptor.BYTE, at, bytes);
        }
    }

    private int encodeGeneral(CapturedCall call, SenderFunction sender, MemorySegment segment, long offset,
                              long limit) {
        int index = sender.index();
        int id = index < idPlusOneByIndex.length ? idPlusOneByIndex[index] - 1 : -1;
        boolean define = id < 0;
        if (define) {
            if (!registry.isCapturingClassAllowed(sender.capturingClassName())) {
                throw new FunctionNotAllowedException("link " + link + ": capturing class "
                        + sender.capturingClassName() + " is not allowed by the serialization registry",
                        sender.capturingClassName(), offset, limit, -1, null);
            }
            if (nextId >= CallRecordDescriptor.MAX_FUNCTIONS_PER_LINK) {
                throw new SerializationException("link " + link + " already uses "
                        + CallRecordDescriptor.MAX_FUNCTIONS_PER_LINK + " distinct functions");
            }
            id = nextId;
        }
        int objectCount = sender.objectGetters().length;
        if (objectCount > 0) {
            readObjectCaptures(call.function, sender);
        }
        try {
            int tag = id << CallRecordDescriptor.FUNCTION_ID_SHIFT | (define ? CallRecordDescriptor.DEFINITION_FLAG : 0);
            int tagSize = CallRecordDescriptor.varIntSize(tag);
            long fixedBody = (define ? sender.definitionBytes().length : 0) + sender.primitiveBytes();
            // Object captures have unknown size: reserve a 2-byte length, move the body if that guess was wrong.
            int reserved = objectCount == 0 ? CallRecordDescriptor.varIntSize(fixedBody)
                    : Math.max(2, CallRecordDescriptor.varIntSize(fixedBody));
            long bodyStart = offset + tagSize + reserved;
            if (bodyStart + fixedBody > limit) {
                return DOES_NOT_FIT;
            }
            long position = bodyStart;
            if (define) {
                MemorySegment.copy(sender.definitionBytes(), 0, segment, CallRecordDescriptor.BYTE, position,
                        sender.definitionBytes().length);
                position += sender.definitionBytes().length;
            }
            copyCaptures(call.captures, segment, position, sender.primitiveBytes());
            position += sender.primitiveBytes();
            if (objectCount > 0) {
                position = writeObjectCaptures(sender, segment, position, limit);
                if (position < 0) {
                    return DOES_NOT_FIT;
                }
            }
            long bodyLength = position - bodyStart;
            if (bodyLength > Integer.MAX_VALUE) {
                return DOES_NOT_FIT;
            }
            int lengthSize = CallRecordDescriptor.varIntSize(bodyLength);
            if (lengthSize != reserved) {
                long shift = lengthSize - reserved;
                if (position + shift > limit) {
                    return DOES_NOT_FIT;
                }
                MemorySegment.copy(segment, bodyStart, segment, bodyStart + shift, bodyLength); // overlap-safe
                position += shift;
                for (long stray = position; stray < position - shift; stray++) {
                    // The body moved back: its old tail lies past the record, where a receiver polling a mapped
                    // chunk reads the next header (a stale byte with its top bit set looks published).
                    segment.set(CallRecordDescriptor.BYTE, stray, (byte) 0);
                }
            }
            CallRecordDescriptor.writeVarInt(segment, offset, tag);
            CallRecordDescriptor.writeVarInt(segment, offset + tagSize, (int) bodyLength);
            if (define) {
                commitId(index, id);
            } else if (objectCount == 0 && tagSize + lengthSize <= Long.BYTES) {
                rememberFast(sender, segment, offset, tagSize + lengthSize, position - offset);
            }
            return (int) (position - offset);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new SerializationException("link " + link + ": cannot encode " + sender.definition().implMethodName()
                    + " of " + sender.capturingClassName(), e);
        } finally {
            if (objectCount > 0) {
                Arrays.fill(objects, 0, objectCount, null);
            }
        }
    }

    /** Forgets every function id of this link; the next call of each function carries its definition again. */
    public void reset() {
        Arrays.fill(idPlusOneByIndex, 0);
        nextId = 0;
        fastSender = null;
    }

    /** Takes the prefix just written at {@code offset} as the constant prefix of every later call of {@code type}. */
    private void rememberFast(SenderFunction sender, MemorySegment segment, long offset, int prefixSize,
                              long length) {
        long prefix = 0;
        for (int i = 0; i < prefixSize; i++) {
            prefix |= (segment.get(CallRecordDescriptor.BYTE, offset + i) & 0xFFL) << (i << 3);
        }
        fastPrefix = prefix;
        fastPrefixSize = prefixSize;
        fastLength = (int) length;
        fastSender = sender;
    }

    /** Number of distinct functions that have been given an id on this link. */
    public int functionCount() {
        return nextId;
    }

    /** Link name given at construction. */
    public String link() {
        return link;
    }

    private void commitId(int index, int id) {
        if (index >= idPlusOneByIndex.length) {
            idPlusOneByIndex = Arrays.copyOf(idPlusOneByIndex, Math.max(index + 1, idPlusOneByIndex.length * 2));
        }
        idPlusOneByIndex[index] = id + 1;
        nextId = id + 1;
    }

    /** Reads the object captures and checks their classes are registered, before anything is written. */
    private void readObjectCaptures(Serializable function, SenderFunction sender) {
        int count = sender.objectGetters().length;
        if (objects.length < count) {
            objects = new Object[count];
        }
        try {
            for (int i = 0; i < count; i++) {
                objects[i] = (Object) sender.objectGetters()[i].invokeExact((Object) function);
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("cannot read captures of a lambda in " + sender.capturingClassName(), e);
        }
        for (int i = 0; i < count; i++) {
            Object value = objects[i];
            if (value != null) {
                try {
                    kryo.getRegistration(value.getClass());
                } catch (IllegalArgumentException e) {
                    kryo.takeUnregistered();
                    Arrays.fill(objects, 0, count, null);
                    throw new UnregisteredClassException(value.getClass().getName(), "link " + link + ", "
                            + sender.objectCaptureNames()[i] + " of a lambda in " + sender.capturingClassName(), e);
                }
            }
        }
    }

    private long writeObjectCaptures(SenderFunction sender, MemorySegment segment, long position, long limit) {
        output.bind(segment, position, limit);
        int i = 0;
        try {
            for (; i < sender.objectGetters().length; i++) {
                kryo.writeClassAndObject(output, objects[i]);
            }
            return output.segmentPosition();
        } catch (KryoBufferOverflowException e) {
            return -1;
        } catch (IllegalArgumentException | KryoException e) {
            Class<?> unregistered = kryo.takeUnregistered();
            if (unregistered != null) {
                throw new UnregisteredClassException(unregistered.getName(), "link " + link + ", reachable from "
                        + sender.objectCaptureNames()[i] + " of a lambda in " + sender.capturingClassName(), e);
            }
            throw new SerializationException("link " + link + ": Kryo cannot write " + sender.objectCaptureNames()[i]
                    + " of a lambda in " + sender.capturingClassName() + ": " + e.getMessage(), e);
        } finally {
            kryo.reset();
            kryo.takeUnregistered();
        }
    }

    static void checkRange(MemorySegment segment, long offset, long limit) {
        Objects.requireNonNull(segment, "segment");
        if (offset < 0 || offset > limit || limit > segment.byteSize()) {
            throw new IllegalArgumentException("range [" + offset + ", " + limit + ") is not within the segment of "
                    + segment.byteSize() + " bytes");
        }
    }
}
