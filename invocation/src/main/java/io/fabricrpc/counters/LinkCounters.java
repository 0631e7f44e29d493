package io.fabricrpc.counters;

import io.fabricrpc.transport.LinkStatistics;

/** A link's counts (writes posted, signaled completions, completion errors) as counters labelled with its peer. */
public final class LinkCounters implements CounterSource {
    private final LinkStatistics statistics;
    private final String peer;

    public LinkCounters(LinkStatistics statistics, String peer) {
        this.statistics = statistics;
        this.peer = peer;
    }

    @Override
    public int counterCount() {
        return 3;
    }

    @Override
    public String label(int index) {
        return switch (index) {
            case 0 -> "writes posted link -> " + peer;
            case 1 -> "signaled completions link -> " + peer;
            default -> "completion errors link -> " + peer;
        };
    }

    @Override
    public int typeId(int index) {
        return switch (index) {
            case 0 -> CounterTypes.WRITES_POSTED;
            case 1 -> CounterTypes.SIGNALED_COMPLETIONS;
            default -> CounterTypes.COMPLETION_ERRORS;
        };
    }

    @Override
    public long loValue(int index) {
        return switch (index) {
            case 0 -> statistics.loWritesPosted();
            case 1 -> statistics.loSignaledCompletions();
            default -> statistics.loCompletionErrors();
        };
    }
}
