package io.fabricrpc.counters;

/** Where the fabric's parts hand their counter sources to the publisher. Any thread; never on a per-call path. */
public interface CounterRegistry {
    /** Counters off ({@code fabric.counters=false}, or the file could not be made): registrations are dropped. */
    CounterRegistry NONE = source -> { };

    void register(CounterSource source);
}
