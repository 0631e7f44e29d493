package io.fabricrpc.aggregation;

import io.fabricrpc.messaging.SendingAgent;

import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Aggregation's duty on its fabric's {@link SendingAgent}: keeps calls from waiting forever in a batch when their
 * sender goes idle. While any aggregator may hold unsent calls, every {@value #PERIOD_NANOS} ns (a tick) it lets each
 * such aggregator push out what has waited up to its maxDelay ({@link Aggregator#pushOutOverdue}). One per fabric.
 *
 * <p>An aggregator's sender counts a mark (a volatile store of a word only it writes), then wakes the agent, which
 * either sees the new mark ({@link Aggregator#unsentMayWait()}) in its last look before parking or is unparked. That look, and the look after an idle park,
 * also revives the watch of a TRADITIONAL aggregator whose calls wait with no new mark ({@link Aggregator#revive}),
 * so a mark lost to a race with the agent's own publication delays a batch by one idle look at most.
 */
final class AggregationDuty implements SendingAgent.Duty {
    static final long PERIOD_NANOS = 200_000;
    private final CopyOnWriteArrayList<Aggregator> aggregators = new CopyOnWriteArrayList<>();
    private final SendingAgent agent;

    private AggregationDuty(SendingAgent agent) {
        this.agent = agent;
    }

    /** The duty of the fabric whose agent this is, created with its first aggregator. */
    static AggregationDuty of(SendingAgent agent) {
        return agent.duty(AggregationDuty.class, () -> new AggregationDuty(agent));
    }

    void register(Aggregator aggregator) {
        aggregators.add(aggregator);
    }

    void unregister(Aggregator aggregator) {
        aggregators.remove(aggregator);
    }

    /** An aggregator's sender, right after it set its flag: wakes the agent if it parks (or is about to). */
    void wakeIfAsleep() {
        agent.wake();
    }

    /** Pushes out every aggregator's overdue calls; a tick while some aggregator may still hold unsent calls. */
    @Override
    public long doWork(long now) {
        boolean waiting = false;
        for (Aggregator aggregator : aggregators) {
            if (aggregator.isClosed() || !aggregator.unsentMayWait()) {
                continue;
            }
            try {
                waiting |= aggregator.pushOutOverdue(now);
            } catch (RuntimeException e) {
                // A dead destination, typically: its sender learns it when it next publishes or flushes. Not retried
                // every period.
                aggregator.clearUnsentMayWait();
                System.getLogger("fabricrpc.aggregation").log(System.Logger.Level.WARNING,
                        "cannot push out the calls of " + aggregator + ": " + e, e);
            }
        }
        return waiting ? PERIOD_NANOS : 0;
    }

    @Override
    public boolean workMayWait() {
        boolean waiting = false;
        for (Aggregator aggregator : aggregators) {
            waiting |= !aggregator.isClosed() && aggregator.revive();
        }
        return waiting;
    }
}
