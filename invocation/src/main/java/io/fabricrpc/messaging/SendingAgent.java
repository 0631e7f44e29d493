package io.fabricrpc.messaging;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.IdleStrategy;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * The one background agent of a messaging node, so of a fabric process: all timer work of the sending path runs here
 * as {@link Duty duties} looked at in turn (waiting flags, RETRY_ASYNC queues, and what a layer above registers, such
 * as aggregation's push-out of idle batches). An Agrona {@link AgentRunner} on a daemon thread of its own.
 *
 * <p>Invariant: a duty whose work may still wait answers the nanoseconds until it wants its next look, and the agent
 * parks for the shortest such tick; when no duty's work may wait it parks until an owner's {@link #wake()}
 * ({@link IdleHandshake}: the duty's {@link Duty#workMayWait()} is the last look before parking), and at most
 * {@link #IDLE_LOOK_NANOS}, so an idle fabric costs ten cheap looks a second. Agent thread only: {@code nextTick}.
 */
public final class SendingAgent implements Agent {
    /** While nothing waits, the agent still looks this often (and revives what an owner's wake-up missed). */
    public static final long IDLE_LOOK_NANOS = 100_000_000;

    /** A piece of timer work. Its methods run on the agent thread. */
    public interface Duty {
        /** One look at {@code nowNanos}: the nanoseconds until the next look while work may wait, 0 when none does. */
        long doWork(long nowNanos);

        /** The last look before the agent parks, and the look after an idle park: true if work waits after all. */
        default boolean workMayWait() {
            return false;
        }
    }

    private final String name;
    private final CopyOnWriteArrayList<Duty> duties = new CopyOnWriteArrayList<>();
    private final ConcurrentHashMap<Class<?>, Duty> byKind = new ConcurrentHashMap<>();
    private final IdleHandshake sleep = new IdleHandshake(this::anyWorkMayWait);
    private final AgentRunner runner;
    private final Thread thread;
    /** Agent thread only: the tick its last look asked for, 0 if none. */
    private long nextTick;

    public SendingAgent(String name) {
        this.name = name;
        this.runner = new AgentRunner(new Idle(), this::report, null, this);
        this.thread = AgentRunner.startOnThread(runner, task -> Thread.ofPlatform().daemon().name(name).unstarted(task));
    }

    /** Adds a duty; the agent looks at it from its next cycle on. */
    public void add(Duty duty) {
        duties.add(duty);
        wake();
    }

    /** The agent's one duty of {@code kind}, created by {@code factory} on first use (e.g. a layer's per-fabric duty). */
    public <D extends Duty> D duty(Class<D> kind, Supplier<D> factory) {
        Duty duty = byKind.computeIfAbsent(kind, k -> {
            D created = factory.get();
            add(created);
            return created;
        });
        return kind.cast(duty);
    }

    /**
     * An owner, right after the volatile store that gives a duty work: unparks the agent if it parks for lack of work
     * (or is about to). Cheap when it does not.
     */
    public void wake() {
        sleep.wake();
    }

    /** Whether the agent parks for lack of work (tests and diagnostics). */
    public boolean isAsleep() {
        return sleep.isAsleep();
    }

    /** The agent's thread (tests and diagnostics). */
    public Thread thread() {
        return thread;
    }

    @Override
    public int doWork() {
        long now = System.nanoTime();
        long tick = 0;
        for (Duty duty : duties) {
            long next;
            try {
                next = duty.doWork(now);
            } catch (Throwable e) { // a duty's failure is reported and the agent goes on with the others
                report(e);
                next = 0;
            }
            if (next > 0) {
                tick = tick == 0 ? next : Math.min(tick, next);
            }
        }
        nextTick = tick;
        return 0; // the idle strategy decides from nextTick
    }

    private boolean anyWorkMayWait() {
        boolean waiting = false;
        for (Duty duty : duties) {
            try {
                waiting |= duty.workMayWait(); // every duty: the look also revives a watch an owner's wake-up missed
            } catch (Throwable e) {
                report(e);
            }
        }
        return waiting;
    }

    private void report(Throwable e) {
        System.getLogger("fabricrpc.messaging").log(System.Logger.Level.ERROR, name + ": " + e, e);
    }

    @Override
    public String roleName() {
        return name;
    }

    /** Stops the agent (at most one idle look late, since it is unparked first). */
    public void close() {
        LockSupport.unpark(thread);
        runner.close(2_000, stuck -> LockSupport.unpark(stuck));
    }

    /** Parks for the tick the last look asked for, or, when no work waits, until woken (bounded). */
    private final class Idle implements IdleStrategy {
        @Override
        public void idle(int workCount) {
            if (nextTick > 0) {
                LockSupport.parkNanos(nextTick);
            } else {
                sleep.parkUnlessWork(IDLE_LOOK_NANOS);
            }
        }

        @Override
        public void idle() {
            idle(0);
        }

        @Override
        public void reset() {
        }
    }
}
