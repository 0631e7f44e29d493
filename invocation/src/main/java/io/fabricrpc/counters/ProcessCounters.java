package io.fabricrpc.counters;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * One process's counts per counter type ({@link CounterTypes}), as its {@link CountersPublisher} last wrote them to
 * the counters file: the sum over the file's counters of each type, plus, for counting types, what sources that have
 * closed had counted. This is what JMX ({@link CountersJmx}) and Micrometer ({@code io.fabricrpc.metrics}) read.
 *
 * <p>Invariant: only the publisher's thread writes (release stores, once per publication); readers on any thread
 * load with acquire and never touch the call path. A counting type's total never goes down.
 */
public final class ProcessCounters {
    private static final AtomicInteger INSTANCES = new AtomicInteger(); // several fabrics of one JVM: one name each

    private final int rank;
    private final String jobId;
    private final int instance = INSTANCES.incrementAndGet();
    private final AtomicLongArray totals = new AtomicLongArray(CounterTypes.MAX_TYPE + 1);

    ProcessCounters(int rank, String jobId) {
        this.rank = rank;
        this.jobId = jobId;
    }

    public int rank() {
        return rank;
    }

    /** The job this process belongs to (its coordinator's {@code host:port}). */
    public String jobId() {
        return jobId;
    }

    /** A number unique among the fabrics this JVM has joined, to tell several fabrics of one JVM apart. */
    public int instance() {
        return instance;
    }

    /** The published total of {@code typeId} (one of {@link CounterTypes}), 0 before the first publication. */
    public long total(int typeId) {
        return totals.getAcquire(typeId);
    }

    /** Publisher thread. */
    void publish(int typeId, long value) {
        totals.setRelease(typeId, value);
    }
}
