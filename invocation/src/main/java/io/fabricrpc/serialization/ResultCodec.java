package io.fabricrpc.serialization;

import io.fabricrpc.api.SerializationRegistry;
import io.fabricrpc.api.RemoteInvocationException;
import io.fabricrpc.api.ResultTooLargeException;

import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.io.KryoBufferOverflowException;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Encodes the results of {@link io.fabricrpc.api.RemoteSupplier} calls (at the callee) and decodes them (at the
 * caller), as result records ({@link CallRecordDescriptor}). Values are {@code null}, primitive boxes, strings or
 * instances of registered classes; a failure carries the remote exception's class name and message as text.
 * Boxing and allocation per result are accepted here.
 *
 * <p>Not thread-safe: one instance per thread (it holds a Kryo instance).
 */
public final class ResultCodec {
    /** Returned by the encode methods when the record does not fit before {@code limit}. */
    public static final int DOES_NOT_FIT = -1;

    private static final int RESERVED_LENGTH_BYTES = 2;

    private final KryoRegistry.FabricKryo kryo;
    private final SegmentOutput output = new SegmentOutput();
    private final SegmentInput input = new SegmentInput();

    /** Creates a codec with its own Kryo instance, using the registrations of {@code registry}. */
    public ResultCodec(SerializationRegistry registry) {
        this.kryo = KryoRegistry.newKryo(Objects.requireNonNull(registry, "registry"));
    }

    /**
     * Encodes a returned value into {@code segment[offset, limit)}; bytes in that range may be overwritten even when
     * it does not fit.
     *
     * @return the record length, or {@link #DOES_NOT_FIT}
     * @throws UnregisteredClassException if the value, or an object reachable from it, is of an unregistered class
     */
    public int encodeValue(Object value, MemorySegment segment, long offset, long limit) {
        CallEncoder.checkRange(segment, offset, limit);
        long bodyStart = offset + 1 + RESERVED_LENGTH_BYTES;
        if (bodyStart > limit) {
            return DOES_NOT_FIT;
        }
        long end;
        output.bind(segment, bodyStart, limit);
        try {
            kryo.writeClassAndObject(output, value);
            end = output.segmentPosition();
        } catch (KryoBufferOverflowException e) {
            return DOES_NOT_FIT;
        } catch (IllegalArgumentException | KryoException e) {
            Class<?> unregistered = kryo.takeUnregistered();
            if (unregistered != null) {
                throw new UnregisteredClassException(unregistered.getName(), "result of class "
                        + value.getClass().getName(), e);
            }
            throw new SerializationException("Kryo cannot write result of class " + value.getClass().getName()
                    + ": " + e.getMessage(), e);
        } finally {
            kryo.reset();
            kryo.takeUnregistered();
        }
        return finish(CallRecordDescriptor.RESULT_VALUE, segment, offset, bodyStart, end, limit);
    }

    /**
     * Encodes a failure: the class name and message of what the remote function threw. The message is shortened
     * to fit when needed.
     *
     * @return the record length, or {@link #DOES_NOT_FIT} if not even the class name fits
     */
    public int encodeFailure(Throwable failure, MemorySegment segment, long offset, long limit) {
        CallEncoder.checkRange(segment, offset, limit);
        byte[] type = failure.getClass().getName().getBytes(StandardCharsets.UTF_8);
        String text = failure.getMessage() == null ? "" : failure.getMessage();
        byte[] message = text.getBytes(StandardCharsets.UTF_8);
        long bodyStart = offset + 1 + RESERVED_LENGTH_BYTES;
        long room = limit - bodyStart - CallRecordDescriptor.varIntSize(type.length) - type.length;
        if (room < 1) {
            return DOES_NOT_FIT;
        }
        int messageLength = message.length;
        if (CallRecordDescriptor.varIntSize(messageLength) + messageLength > room) {
            messageLength = (int) Math.max(0, room - CallRecordDescriptor.MAX_VARINT_LENGTH);
            while (messageLength > 0 && (message[messageLength] & 0xC0) == 0x80) {
                messageLength--; // do not cut a UTF-8 sequence
            }
        }
        long position = bodyStart;
        position += CallRecordDescriptor.writeVarInt(segment, position, type.length);
        MemorySegment.copy(type, 0, segment, CallRecordDescriptor.BYTE, position, type.length);
        position += type.length;
        position += CallRecordDescriptor.writeVarInt(segment, position, messageLength);
        MemorySegment.copy(message, 0, segment, CallRecordDescriptor.BYTE, position, messageLength);
        position += messageLength;
        return finish(CallRecordDescriptor.RESULT_FAILURE, segment, offset, bodyStart, position, limit);
    }

    private static int finish(byte status, MemorySegment segment, long offset, long bodyStart, long end, long limit) {
        long bodyLength = end - bodyStart;
        if (bodyLength > Integer.MAX_VALUE) {
            return DOES_NOT_FIT;
        }
        int lengthSize = CallRecordDescriptor.varIntSize(bodyLength);
        if (lengthSize != RESERVED_LENGTH_BYTES) {
            long shift = lengthSize - RESERVED_LENGTH_BYTES;
            if (end + shift > limit) {
                return DOES_NOT_FIT;
            }
            MemorySegment.copy(segment, bodyStart, segment, bodyStart + shift, bodyLength); // overlap-safe
            end += shift;
        }
        segment.set(CallRecordDescriptor.BYTE, offset + CallRecordDescriptor.RESULT_STATUS_OFFSET, status);
        CallRecordDescriptor.writeVarInt(segment, offset + 1, (int) bodyLength);
        return (int) (end - offset);
    }

    /**
     * Decodes the result record at {@code offset}.
     *
     * @return the remote function's value
     * @throws RemoteInvocationException if the record reports that the remote function threw
     * @throws CallDecodingException     if the record is malformed or truncated, or names an unregistered class
     */
    public Object decode(MemorySegment segment, long offset, long limit) {
        CallEncoder.checkRange(segment, offset, limit);
        long end = CallRecordDescriptor.resultRecordEnd(segment, offset, limit);
        byte status = segment.get(CallRecordDescriptor.BYTE, offset + CallRecordDescriptor.RESULT_STATUS_OFFSET);
        long bodyStart = offset + 1 + CallRecordDescriptor.varIntLength(
                CallRecordDescriptor.readVarInt(segment, offset + 1, limit));
        if (status == CallRecordDescriptor.RESULT_FAILURE) {
            long[] cursor = {bodyStart};
            String type = readString(segment, cursor, end, offset, limit);
            String message = readString(segment, cursor, end, offset, limit);
            throw type.equals(ResultTooLargeException.class.getName()) ? new ResultTooLargeException(message)
                    : new RemoteInvocationException(type, message);
        }
        if (status != CallRecordDescriptor.RESULT_VALUE) {
            throw new CallDecodingException("unknown result status " + status, offset, limit, end);
        }
        Object value;
        try {
            input.bind(segment, bodyStart, end);
            value = kryo.readClassAndObject(input);
        } catch (RuntimeException e) {
            throw new CallDecodingException("cannot read result: " + e.getMessage(), offset, limit, end, e);
        } finally {
            kryo.reset();
        }
        if (input.segmentPosition() != end) {
            throw new CallDecodingException("result value ends at " + input.segmentPosition()
                    + ", not at the record end", offset, limit, end);
        }
        return value;
    }

    private static String readString(MemorySegment segment, long[] cursor, long end, long offset, long limit) {
        long packed = CallRecordDescriptor.readVarInt(segment, cursor[0], end);
        if (packed < 0 || cursor[0] + CallRecordDescriptor.varIntLength(packed)
                + CallRecordDescriptor.varIntValue(packed) > end) {
            throw new CallDecodingException("malformed failure result", offset, limit, end);
        }
        long start = cursor[0] + CallRecordDescriptor.varIntLength(packed);
        int length = CallRecordDescriptor.varIntValue(packed);
        cursor[0] = start + length;
        return new String(segment.asSlice(start, length).toArray(CallRecordDescriptor.BYTE), StandardCharsets.UTF_8);
    }
}
