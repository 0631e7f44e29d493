package io.fabricrpc.api;

/**
 * Global identity of a worker thread in a job: the process rank and the thread's index inside that process.
 *
 * <p>The compact {@code long} encoding ({@link #pack}) puts the rank in the high 32 bits and the thread index in
 * the low 32 bits, so it can be stored in a plain {@code long} field or a message header without allocation.
 * Immutable and thread-safe.
 *
 * @param rank        process rank, {@code >= 0}
 * @param threadIndex index of the thread inside its process, {@code >= 0}
 */
public record ThreadId(int rank, int threadIndex) {

    /**
     * Checks the components.
     *
     * @throws IllegalArgumentException if {@code rank} or {@code threadIndex} is negative
     */
    public ThreadId {
        if (rank < 0 || threadIndex < 0) {
            throw new IllegalArgumentException("rank and threadIndex must be >= 0: rank=" + rank
                + " threadIndex=" + threadIndex);
        }
    }

    /**
     * Packs {@code (rank, threadIndex)} into one long; both must be {@code >= 0}.
     *
     * @param rank process rank, {@code >= 0}
     * @param threadIndex index of the thread inside its process, {@code >= 0}
     * @return the rank in the high 32 bits, the thread index in the low 32 bits
     * @throws IllegalArgumentException if either is negative
     */
    public static long pack(int rank, int threadIndex) {
        if (rank < 0 || threadIndex < 0) {
            throw new IllegalArgumentException("rank and threadIndex must be >= 0: rank=" + rank
                + " threadIndex=" + threadIndex);
        }
        return ((long) rank << 32) | threadIndex;
    }

    /**
     * Rank of a packed id.
     *
     * @param packed an id in the compact encoding
     * @return its high 32 bits
     */
    public static int rankOf(long packed) {
        return (int) (packed >>> 32);
    }

    /**
     * Thread index of a packed id.
     *
     * @param packed an id in the compact encoding
     * @return its low 32 bits
     */
    public static int threadIndexOf(long packed) {
        return (int) packed;
    }

    /**
     * Decodes a packed id; throws {@link IllegalArgumentException} if either half is negative.
     *
     * @param packed an id in the compact encoding
     * @return the id
     */
    public static ThreadId fromLong(long packed) {
        return new ThreadId(rankOf(packed), threadIndexOf(packed));
    }

    /** {@return this id in the compact encoding} */
    public long toLong() {
        return pack(rank, threadIndex);
    }

    /**
     * Dense index {@code rank * threadsPerProcess + threadIndex}, for arrays over all long-lived threads.
     *
     * @param threadsPerProcess long-lived threads per process in the job
     * @return {@code rank * threadsPerProcess + threadIndex}
     * @throws ArithmeticException if {@code rank * threadsPerProcess} overflows an {@code int}
     * @throws IllegalArgumentException if {@code threadIndex >= threadsPerProcess}
     */
    public int globalIndex(int threadsPerProcess) {
        if (threadIndex >= threadsPerProcess) {
            throw new IllegalArgumentException("threadIndex " + threadIndex + " >= threadsPerProcess "
                + threadsPerProcess);
        }
        return Math.multiplyExact(rank, threadsPerProcess) + threadIndex;
    }

    @Override
    public String toString() {
        return rank + "/" + threadIndex;
    }
}
