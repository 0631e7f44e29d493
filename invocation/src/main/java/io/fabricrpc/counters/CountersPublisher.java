package io.fabricrpc.counters;

import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Copies the counts of registered {@link CounterSource}s into a {@link CountersFile}, at most once a period, from the
 * fabric's background agent (a duty that asks for no tick of its own: an idle agent still looks every 100 ms).
 *
 * <p>Invariant: {@link #publishIfDue} and {@link #publishNow} run on one thread (the agent), which alone allocates,
 * frees and writes counters, values by release stores. A published value never goes down: an owner's count is read
 * racily (e.g. bytes of sealed chunks plus the current chunk's), so a momentary low reading is not shown. Each
 * publication also sums the published values per type into {@link #totals()}, which JMX and Micrometer read.
 */
public final class CountersPublisher implements CounterRegistry {
    private static final class Bound {
        final CounterSource source;
        final int[] ids;
        final long[] last;

        Bound(CounterSource source, int[] ids) {
            this.source = source;
            this.ids = ids;
            this.last = new long[ids.length];
        }
    }

    private final CountersFile file;
    private final ProcessCounters totals;
    /** The MBean of {@link #totals}, or null ({@code fabric.jmx=false} or it could not be registered). */
    private volatile CountersJmx jmx;
    private final long periodNanos;
    private final ConcurrentLinkedQueue<CounterSource> added = new ConcurrentLinkedQueue<>();
    // ---- publisher thread only ----
    private final List<Bound> bound = new ArrayList<>();
    private final int droppedId;
    /** Per type: the counts of sources that closed, so a total never goes down; and one publication's sums. */
    private final long[] retired = new long[CounterTypes.MAX_TYPE + 1];
    private final long[] sums = new long[CounterTypes.MAX_TYPE + 1];
    private long dropped;
    private long lastPublish;

    public CountersPublisher(CountersFile file, long periodNanos) {
        this(file, periodNanos, new ProcessCounters(-1, ""));
    }

    private CountersPublisher(CountersFile file, long periodNanos, ProcessCounters totals) {
        this.file = file;
        this.totals = totals;
        this.periodNanos = periodNanos;
        this.droppedId = file.manager().allocate("counters dropped (file full: raise fabric.counters.max)",
                CounterTypes.COUNTERS_DROPPED);
        this.lastPublish = System.nanoTime() - periodNanos;
    }

    /**
     * The publisher of a new counters file as {@code settings} ask ({@link CountersConfig}), or null when counters are
     * off or the file cannot be made (a warning: a job never fails for its counters). Bad settings throw.
     */
    public static CountersPublisher open(java.util.Map<String, String> settings, int rank, String jobId) {
        CountersConfig config = CountersConfig.from(settings);
        if (!config.enabled()) {
            return null;
        }
        CountersPublisher publisher;
        try {
            publisher = new CountersPublisher(CountersFile.create(config, rank, jobId),
                    java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(config.periodMillis()),
                    new ProcessCounters(rank, jobId));
        } catch (java.io.IOException | RuntimeException e) {
            System.getLogger("fabricrpc").log(System.Logger.Level.WARNING, "rank " + rank
                    + ": running without a counters file (" + CountersConfig.ENABLED + "=false silences this): " + e);
            return null;
        }
        if (config.jmx()) {
            publisher.jmx = CountersJmx.register(publisher.totals);
        }
        return publisher;
    }

    public CountersFile file() {
        return file;
    }

    /** The published counts per type, for readers on any thread. */
    public ProcessCounters totals() {
        return totals;
    }

    /** The MBean of this process's counters, or null when there is none. */
    public CountersJmx jmx() {
        return jmx;
    }

    /** Unregisters the MBean, then deletes and unmaps the file. The publisher must have stopped. */
    public void close() {
        CountersJmx bean = jmx;
        if (bean != null) {
            bean.unregister();
            jmx = null;
        }
        file.close();
    }

    /** Any thread: the source's counters appear in the file at the next publication. */
    @Override
    public void register(CounterSource source) {
        added.add(source);
    }

    /** Publisher thread: publishes if a period has passed since the last time. Returns 0 (no tick asked). */
    public long publishIfDue(long nowNanos) {
        if (nowNanos - lastPublish >= periodNanos) {
            lastPublish = nowNanos;
            publishNow();
        }
        return 0;
    }

    /** Publisher thread: allocates counters for new sources, copies every value, frees those of closed sources. */
    public void publishNow() {
        CountersManager manager = file.manager();
        for (CounterSource source; (source = added.poll()) != null; ) {
            bind(manager, source);
        }
        System.arraycopy(retired, 0, sums, 0, sums.length);
        for (int b = bound.size() - 1; b >= 0; b--) {
            Bound one = bound.get(b);
            CounterSource source = one.source;
            boolean closed = source.isClosed();
            for (int i = 0; i < one.ids.length; i++) {
                long value = source.loValue(i);
                int type = source.typeId(i);
                if (value > one.last[i] || CounterTypes.isGauge(type)) {
                    one.last[i] = value;
                    file.soValue(one.ids[i], value);
                }
                if (type > 0 && type <= CounterTypes.MAX_TYPE) {
                    sums[type] += one.last[i];
                    if (closed && !CounterTypes.isGauge(type)) {
                        retired[type] += one.last[i]; // a closed source's level is gone, its count stays
                    }
                }
            }
            if (closed) {
                for (int id : one.ids) {
                    manager.free(id);
                }
                bound.remove(b);
            }
        }
        file.soValue(droppedId, dropped);
        sums[CounterTypes.COUNTERS_DROPPED] += dropped;
        for (int type = 1; type < sums.length; type++) {
            totals.publish(type, sums[type]);
        }
    }

    private void bind(CountersManager manager, CounterSource source) {
        int n = source.counterCount();
        int[] ids = new int[n];
        for (int i = 0; i < n; i++) {
            int id;
            try {
                String label = source.label(i);
                id = manager.allocate(label.length() > CountersReader.MAX_LABEL_LENGTH
                        ? label.substring(0, CountersReader.MAX_LABEL_LENGTH) : label, source.typeId(i));
            } catch (IllegalStateException e) { // no room left in the file
                for (int j = 0; j < i; j++) {
                    manager.free(ids[j]);
                }
                dropped += n;
                return;
            }
            ids[i] = id;
        }
        bound.add(new Bound(source, ids));
    }
}
