package io.fabricrpc.messaging;

/** Thread ids as a user reads them in messages. */
public final class ThreadNames {
    private ThreadNames() {
    }

    /**
     * A packed thread id as {@code rank/thread}: rank in the high half, thread index in the low 20 bits, and above
     * them the number of the aggregation view the runtime sends through (Routes.VIEW_SHIFT), shown if not 0.
     */
    public static String of(long packed) {
        int low = (int) packed;
        return (packed >>> 32) + "/" + (low & 0xF_FFFF) + (low >>> 20 == 0 ? "" : " (view " + (low >>> 20) + ")");
    }
}
