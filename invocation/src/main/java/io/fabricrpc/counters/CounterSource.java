package io.fabricrpc.counters;

/**
 * A group of counts that live in plain fields of the threads that make them (a messenger's sender, a receiving
 * thread, a link's posting threads). The publisher, on the fabric's agent thread, reads them with {@link #loValue}
 * and copies them into the counters file; the owners never touch the file.
 *
 * <p>Invariant: {@link #label} and {@link #typeId} are fixed per index; {@link #loValue} reads each owner's field
 * with an opaque load (atomic, no ordering asked of the owner) and never allocates.
 */
public interface CounterSource {
    /** How many counters this source has. */
    int counterCount();

    /** A readable label, e.g. {@code calls sent 1/0 -> 2/1}; read once, at registration. */
    String label(int index);

    /** One of {@link CounterTypes}. */
    int typeId(int index);

    /** Agent thread: the current value, by an opaque load of its owner's field. */
    long loValue(int index);

    /** True once the owner is gone for good: the publisher frees its counters. */
    default boolean isClosed() {
        return false;
    }
}
