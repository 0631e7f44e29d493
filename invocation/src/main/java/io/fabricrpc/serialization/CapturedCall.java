package io.fabricrpc.serialization;

import java.io.Serializable;
import java.lang.foreign.MemorySegment;

/**
 * One call's function, taken apart when the call is made: its sender view and its primitive captures, copied into
 * this object's own array. The record is encoded from here ({@link CallEncoder#encode(CapturedCall,
 * MemorySegment, long, long)}), possibly later and more than once (a retry in a fresh chunk), without the lambda.
 *
 * <p>Why: the lambda object is then read only here, right where the caller made it. When the call path inlines
 * down to {@link #capture} (the fabric's call entry points are force-inlined), the JIT sees the lambda's exact
 * class, the sender view and its capture writer become constants, and the lambda never escapes: escape analysis
 * removes its allocation (272 bytes for 32 captured longs). A lambda that captures objects is kept (its objects go
 * through Kryo at encoding time) and is allocated as before.
 *
 * <p>Reused for every call of one thread at one nesting level; not thread-safe.
 */
public final class CapturedCall {
    /** Room for 32 longs; grows (rarely: a lambda captures at most 255 slots) to the largest function seen. */
    private static final int INITIAL_CAPTURE_BYTES = 256;

    SenderFunction sender;
    /** The function itself, only while it captures objects; null otherwise, so that nothing keeps the lambda. */
    Serializable function;
    /** The primitive captures, in record layout ({@link CallRecordDescriptor#primitiveOffsets}). */
    byte[] captures = new byte[INITIAL_CAPTURE_BYTES];

    /**
     * Takes {@code function} apart for one call.
     *
     * @throws IllegalArgumentException if {@code function} is not a serializable lambda or method reference of an
     *                                  {@code io.fabricrpc.api} interface (this object is then unchanged)
     */
    public void capture(Serializable function) {
        SenderFunction sender = SenderFunction.of(function);
        if (sender.primitiveBytes() > captures.length) {
            growTo(sender.primitiveBytes());
        }
        sender.primitiveWriter().write(function, captures);
        this.sender = sender;
        // A constant branch once the sender is: the lambda is stored only where it captures objects.
        this.function = sender.capturesObjects() ? function : null;
    }

    /** Drops the function, so that a finished call keeps no objects reachable. */
    public void clear() {
        sender = null;
        function = null;
    }

    private void growTo(int bytes) {
        captures = new byte[bytes];
    }
}
