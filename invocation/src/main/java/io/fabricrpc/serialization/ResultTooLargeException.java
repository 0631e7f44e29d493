package io.fabricrpc.serialization;

/**
 * A {@code callReturn} result did not fit its return slot: the function ran at the destination, but its result could
 * not be written back. The message names the result's type, the bytes it needed, the room a slot has and the
 * {@code returnSlotBytes} setting ({@link io.fabricrpc.api.FabricConfig#withReturnSlotBytes}) that would fit it.
 */
public final class ResultTooLargeException extends RemoteInvocationException {
    private static final long serialVersionUID = 1L;

    /** Bytes of a return slot that are not the result's value: slot header (16) and result record header (3). */
    public static final int SLOT_OVERHEAD_BYTES = 19;

    /** Carries {@code message} as it was written at the destination. */
    public ResultTooLargeException(String message) {
        super(message, ResultTooLargeException.class.getName(), message);
    }

    /**
     * The message for a result of {@code type} that needs {@code needed} bytes ({@code -1} if unknown) where a slot
     * of {@code slotBytes} has room for {@code room}.
     */
    public static String describe(String type, long needed, long room, int slotBytes) {
        String fix;
        if (needed > 0) {
            long header = SLOT_OVERHEAD_BYTES + (needed > 16383 ? 1 : 0); // a third length byte past 14 bits
            long slot = (needed + header + 63) / 64 * 64;
            fix = "set returnSlotBytes to at least " + slot + " (FabricConfig.withReturnSlotBytes, the same on every"
                    + " process) or return less";
        } else {
            fix = "raise returnSlotBytes (FabricConfig.withReturnSlotBytes, the same on every process) or return less";
        }
        return "the callReturn result of type " + type + " does not fit the return slot: it needs "
                + (needed > 0 ? needed + " bytes" : "more than " + MEASURE_LIMIT_BYTES + " bytes") + ", the slot has room"
                + " for " + room + " (returnSlotBytes = " + slotBytes + ", of which " + SLOT_OVERHEAD_BYTES
                + " are header); " + fix;
    }

    /** How far the destination serializes a result that did not fit, to tell how many bytes it needs. */
    public static final int MEASURE_LIMIT_BYTES = 16 << 20;
}
