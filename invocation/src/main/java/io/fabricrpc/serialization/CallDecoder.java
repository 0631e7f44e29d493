package io.fabricrpc.serialization;

import io.fabricrpc.api.SerializationRegistry;

import io.fabricrpc.api.LocalRegion;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.Arrays;
import java.util.Objects;

/**
 * Receiver side of one link and direction: decodes call records written by the peer's {@link CallEncoder} and
 * invokes them on the calling thread.
 *
 * <p>A definition record is checked and linked once ({@link SerializationRegistry}); later records are looked up by
 * id in an array and invoked through code generated for the definition, which reads primitive captures straight
 * from the record. In steady state, a call whose captures are all primitive allocates nothing, provided the same
 * {@link MemorySegment} instance is passed each time.
 *
 * <p>Errors: a malformed, truncated or refused record throws a {@link CallDecodingException} (subclasses
 * {@link UnknownFunctionException}, {@link FunctionNotAllowedException}) whose {@code recordEnd()} tells where the
 * next record starts when the header was readable; the function is not invoked and the decoder stays usable. An
 * exception thrown by the invoked function itself propagates unchanged (checked ones wrapped in
 * {@link UndeclaredThrowableException}); the record was fully consumed and the next one starts at
 * {@link CallRecordDescriptor#recordEnd}.
 *
 * <p>Not thread-safe, by design: one decoder per receiving thread and peer link.
 */
public final class CallDecoder {
    private static final ReceiverFunction[] NO_FUNCTIONS = new ReceiverFunction[0];

    private final SerializationRegistry registry;
    private final String link;
    private final Object context;
    /** {@code "link <name>: "}, built once: the hot path must not concatenate. */
    private final String messagePrefix;
    private final KryoRegistry.FabricKryo kryo;
    private final SegmentInput input = new SegmentInput();
    private final long[] definitionEnd = new long[1];
    private ReceiverFunction[] functions = NO_FUNCTIONS;
    /** Why a function id's definition was refused, to repeat it for later calls with that id. */
    private String[] refusals = new String[0];
    private Object[] objects = new Object[4];
    private Object lastResult;
    /*
     * The last primitives-only function this decoder invoked, by the first four bytes of its records: the tag and
     * body-length varints (a constant prefix for such a function, at most 4 bytes), masked, then whatever follows.
     * A record whose masked first word equals it is a call of that function with the same length, so the varint
     * parsing and checks of the general path are already done. A monomorphic cache, as the encoder's.
     */
    private static final ValueLayout.OfInt FIRST_WORD =
            ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN); // record byte i = bits 8i..8i+7
    private ReceiverFunction fastFunction;
    private int fastPrefix;
    private int fastMask;
    private int fastPrefixSize;
    private int fastLength;

    /** A decoder whose thread has no context object (functions of the context fail with WrongContextException). */
    public CallDecoder(SerializationRegistry registry, String link) {
        this(registry, link, null);
    }

    /**
     * Creates the decoder of one link and direction, with its own Kryo instance.
     *
     * @param registry the registry both ends built identically
     * @param link     name of the link and direction, used in error messages only
     * @param context  the receiving thread's context, passed to every {@link io.fabricrpc.api.RemoteContextConsumer}
     *                 this decoder invokes; may be null
     */
    public CallDecoder(SerializationRegistry registry, String link, Object context) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.link = Objects.requireNonNull(link, "link");
        this.context = context;
        this.messagePrefix = "link " + link + ": ";
        this.kryo = KryoRegistry.newKryo(registry);
    }

    /**
     * Decodes the call record at {@code offset} and invokes its function.
     *
     * @param argument the function's argument: the received buffer ({@link MemorySegment}) for a
     *                 {@link io.fabricrpc.api.RemoteBufferConsumer}; ignored for the other shapes (a
     *                 {@link io.fabricrpc.api.RemoteContextConsumer} gets this decoder's context)
     * @return the offset just past the record, where the next record may start
     * @throws CallDecodingException    if the record is malformed, truncated, names an unknown function id or
     *                                  carries a refused definition; the function was not invoked
     * @throws IllegalArgumentException if the range is outside the segment
     * @throws RuntimeException         whatever the invoked function threw
     */
    public long invoke(MemorySegment segment, long offset, long limit, Object argument) {
        CallEncoder.checkRange(segment, offset, limit);
        assert LocalRegion.isPlainNative(segment) : "calls are decoded from plain native segments only, got "
                + segment.getClass().getName() + " " + segment;
        lastResult = null;
        ReceiverFunction fast = fastFunction;
        if (fast != null && limit - offset >= Math.max(Integer.BYTES, fastLength)
                && (segment.get(FIRST_WORD, offset) & fastMask) == fastPrefix) {
            invokeFunction(fast, segment, offset + fastPrefixSize, argument);
            return offset + fastLength;
        }
        return invokeGeneral(segment, offset, limit, argument);
    }

    private long invokeGeneral(MemorySegment segment, long offset, long limit, Object argument) {
        long tagPacked = CallRecordDescriptor.readVarInt(segment, offset, limit);
        if (tagPacked < 0) {
            throw new CallDecodingException("link " + link + ": malformed call record tag", offset, limit, -1);
        }
        long recordEnd = CallRecordDescriptor.recordEnd(segment, offset, limit, messagePrefix);
        int tag = CallRecordDescriptor.varIntValue(tagPacked);
        int id = tag >>> CallRecordDescriptor.FUNCTION_ID_SHIFT;
        long lengthAt = offset + CallRecordDescriptor.varIntLength(tagPacked);
        long position = lengthAt + CallRecordDescriptor.varIntLength(
                CallRecordDescriptor.readVarInt(segment, lengthAt, limit));
        if (id >= CallRecordDescriptor.MAX_FUNCTIONS_PER_LINK) {
            throw new UnknownFunctionException("link " + link + ": function id " + id + " is beyond the limit of "
                    + CallRecordDescriptor.MAX_FUNCTIONS_PER_LINK, id, offset, limit, recordEnd);
        }
        if ((tag & CallRecordDescriptor.DEFINITION_FLAG) != 0) {
            position = define(id, segment, offset, position, recordEnd, limit);
        }
        ReceiverFunction function = id < functions.length ? functions[id] : null;
        if (function == null) {
            String refusal = id < refusals.length ? refusals[id] : null;
            throw new UnknownFunctionException("link " + link + ": unknown function id " + id
                    + (refusal != null ? " (its definition was refused: " + refusal + ")"
                    : " (no definition received on this link)"), id, offset, limit, recordEnd);
        }
        long objectsAt = position + function.primitiveBytes;
        if (objectsAt > recordEnd || function.objectCount == 0 && objectsAt != recordEnd) {
            throw new CallDecodingException("link " + link + ": record of " + function.name + " has "
                    + (recordEnd - position) + " capture bytes, expected " + function.primitiveBytes
                    + (function.objectCount > 0 ? " or more" : ""), offset, limit, recordEnd);
        }
        if (function.takesContext && !fitsContext(function)) {
            // Checked before the fast path may remember the function: this decoder's context never changes.
            throw new WrongContextException(messagePrefix + function.name + " is a function of a context of type "
                    + function.contextType.getName() + ", but the destination thread " + (context == null
                    ? "has no context object (attach(index, context) gives it one)"
                    : "has a context of type " + context.getClass().getName()), offset, limit, recordEnd);
        }
        if (function.objectCount > 0) {
            readObjects(function, segment, objectsAt, recordEnd, offset, limit);
        } else if (position - offset <= Integer.BYTES) {
            rememberFast(function, segment, offset, (int) (position - offset), recordEnd - offset);
        }
        invokeFunction(function, segment, position, argument);
        return recordEnd;
    }

    private boolean fitsContext(ReceiverFunction function) {
        return context != null && (function.contextType == null || function.contextType.isInstance(context));
    }

    private void invokeFunction(ReceiverFunction function, MemorySegment segment, long position, Object argument) {
        try {
            Object passed = function.takesContext ? context : argument;
            lastResult = function.invoker.invoke(segment, position, objects, passed);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new UndeclaredThrowableException(e, "remote function " + function.name + " threw " + e);
        } finally {
            if (function.objectCount > 0) {
                Arrays.fill(objects, 0, function.objectCount, null);
            }
        }
    }

    /** Takes the prefix of the record at {@code offset}, a call of a primitives-only function, as the cached one. */
    private void rememberFast(ReceiverFunction function, MemorySegment segment, long offset, int prefixSize,
                              long length) {
        if (length > Integer.MAX_VALUE || segment.byteSize() - offset < Integer.BYTES) {
            return; // not cacheable; an older cached function stays right for its own prefix
        }
        int mask = (int) ((1L << (prefixSize << 3)) - 1); // the prefix: the low bytes of the first word
        fastPrefix = segment.get(FIRST_WORD, offset) & mask;
        fastMask = mask;
        fastPrefixSize = prefixSize;
        fastLength = (int) length;
        fastFunction = function;
    }

    /**
     * The value returned by the last {@link #invoke} of a {@link io.fabricrpc.api.RemoteSupplier} (boxed if
     * primitive); {@code null} after other shapes or a failed invoke.
     */
    public Object lastResult() {
        return lastResult;
    }

    /** Forgets all function definitions of this link (pair with {@link CallEncoder#reset()} at the peer). */
    public void reset() {
        Arrays.fill(functions, null);
        Arrays.fill(refusals, null);
        fastFunction = null;
    }

    /** Link name given at construction. */
    public String link() {
        return link;
    }

    private long define(int id, MemorySegment segment, long offset, long position, long recordEnd, long limit) {
        fastFunction = null; // the id may be redefined: never take its old function by the cached prefix
        FunctionDefinition definition;
        try {
            definition = FunctionDefinition.read(segment, position, recordEnd, definitionEnd);
        } catch (IllegalArgumentException e) {
            throw new CallDecodingException("link " + link + ": malformed definition of function id " + id + ": "
                    + e.getMessage(), offset, limit, recordEnd, e);
        }
        if (id >= functions.length) {
            int size = Math.min(CallRecordDescriptor.MAX_FUNCTIONS_PER_LINK, Math.max(id + 1, functions.length * 2));
            functions = Arrays.copyOf(functions, size);
            refusals = Arrays.copyOf(refusals, size);
        }
        try {
            functions[id] = KryoRegistry.link(registry, definition);
            refusals[id] = null;
        } catch (FunctionLinker.Refused e) {
            functions[id] = null;
            refusals[id] = e.getMessage();
            throw new FunctionNotAllowedException("link " + link + ": function id " + id + " refused: "
                    + e.getMessage(), definition.capturingClassName(), offset, limit, recordEnd, e.getCause());
        }
        return definitionEnd[0];
    }

    private void readObjects(ReceiverFunction function, MemorySegment segment, long start, long recordEnd,
                             long offset, long limit) {
        if (objects.length < function.objectCount) {
            objects = new Object[function.objectCount];
        }
        int i = 0;
        try {
            input.bind(segment, start, recordEnd);
            for (; i < function.objectCount; i++) {
                Object read = kryo.readClassAndObject(input);
                objects[i] = read;
                if (!function.accepts(i, read)) {
                    // A forged definition or record: the generated invoker's cast would throw ClassCastException.
                    throw new IllegalArgumentException("it is " + (read == null ? "null" : "a " + read.getClass()
                            .getName()) + ", but the function takes " + function.objectTypes[i].getName());
                }
            }
        } catch (RuntimeException e) {
            Arrays.fill(objects, 0, function.objectCount, null);
            throw new CallDecodingException("link " + link + ": cannot read object capture " + i + " of "
                    + function.name + ": " + e.getMessage(), offset, limit, recordEnd, e);
        } finally {
            kryo.reset();
        }
        long end = input.segmentPosition();
        if (end != recordEnd) {
            Arrays.fill(objects, 0, function.objectCount, null);
            throw new CallDecodingException("link " + link + ": object captures of " + function.name + " end at "
                    + end + ", not at the record end", offset, limit, recordEnd);
        }
    }
}
