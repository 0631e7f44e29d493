package io.fabricrpc.serialization;

import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.io.ByteBufferInput;

import java.lang.foreign.MemorySegment;

/**
 * Kryo input reading straight from a window {@code [start, limit)} of a segment (Kryo throws
 * {@code KryoBufferUnderflowException} at {@code limit}). String and primitive array reads check their length
 * against the bytes left before allocating, so a corrupt length cannot make the receiver allocate gigabytes.
 */
final class SegmentInput extends ByteBufferInput {
    private final SegmentOutput.SegmentWindow window = new SegmentOutput.SegmentWindow();

    void bind(MemorySegment segment, long start, long limit) {
        setBuffer(window.bind(segment, start, limit));
    }

    long segmentPosition() {
        return window.base() + position;
    }

    private void checkArray(int length, int elementBytes) {
        long needed = (long) length * elementBytes;
        if (length < 0 || needed > limit - position) {
            throw new KryoException("array of " + length + " elements needs " + needed + " bytes but only "
                    + (limit - position) + " remain in the record");
        }
    }

    /** A UTF-8 string's char count precedes its bytes; each char takes at least one byte. */
    private void checkStringLength() {
        if (readVarIntFlag()) { // peeks: set for length-prefixed (non-ASCII) strings
            int mark = position;
            int lengthPlusOne = readVarIntFlag(true);
            long remaining = limit - position;
            setPosition(mark);
            if (lengthPlusOne > 1 && lengthPlusOne - 1 > remaining) {
                throw new KryoException("string of " + (lengthPlusOne - 1) + " chars cannot fit in the " + remaining
                        + " bytes that remain in the record");
            }
        }
    }

    @Override
    public String readString() {
        checkStringLength();
        return super.readString();
    }

    @Override
    public StringBuilder readStringBuilder() {
        checkStringLength();
        return super.readStringBuilder();
    }

    @Override
    public byte[] readBytes(int length) throws KryoException {
        checkArray(length, 1);
        return super.readBytes(length);
    }

    @Override
    public int[] readInts(int length) throws KryoException {
        checkArray(length, 1); // var-encoded ints take at least one byte each
        return super.readInts(length);
    }

    @Override
    public int[] readInts(int length, boolean optimizePositive) throws KryoException {
        checkArray(length, 1);
        return super.readInts(length, optimizePositive);
    }

    @Override
    public long[] readLongs(int length) throws KryoException {
        checkArray(length, 1);
        return super.readLongs(length);
    }

    @Override
    public long[] readLongs(int length, boolean optimizePositive) throws KryoException {
        checkArray(length, 1);
        return super.readLongs(length, optimizePositive);
    }

    @Override
    public float[] readFloats(int length) throws KryoException {
        checkArray(length, 4);
        return super.readFloats(length);
    }

    @Override
    public double[] readDoubles(int length) throws KryoException {
        checkArray(length, 8);
        return super.readDoubles(length);
    }

    @Override
    public short[] readShorts(int length) throws KryoException {
        checkArray(length, 2);
        return super.readShorts(length);
    }

    @Override
    public char[] readChars(int length) throws KryoException {
        checkArray(length, 2);
        return super.readChars(length);
    }

    @Override
    public boolean[] readBooleans(int length) throws KryoException {
        checkArray(length, 1);
        return super.readBooleans(length);
    }
}
