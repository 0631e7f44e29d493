package io.fabricrpc.invocation;

import io.fabricrpc.messaging.SendingAgent;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Names a worker that blocks outside the fabric while {@code callReturn} requests wait for it (Vert.x's blocked
 * thread checker): a worker that has begun no round of {@code processCalls} for {@link #BLOCKED_NANOS} while a
 * request waits on one of its mailbox ports is reported once per stall, with how many wait and its thread's stack.
 * Such a worker cannot answer peers that wait for it, typically because it waits in
 * {@code CompletableFuture.allOf(...).join()}; {@code fabric.awaitAll} waits without blocking it. Agent thread only;
 * it reads the workers' poll counters and the ports' inbox words, writes nothing of theirs.
 */
final class BlockedWorkers implements SendingAgent.Duty {
    static final long BLOCKED_NANOS = 1_000_000_000L;
    static final long LOOK_NANOS = 200_000_000L;
    private static final System.Logger LOG = System.getLogger("fabricrpc.workers");

    private final ThreadContexts contexts;
    private final MailboxChannelSet mailboxes;
    private final int rank;
    private final long[] pollsSeen;
    private final long[] stillSince;
    private final boolean[] reported;
    private final AtomicLong reports = new AtomicLong();
    private long lastLook;

    BlockedWorkers(ThreadContexts contexts, MailboxChannelSet mailboxes, int rank, int threads) {
        this.contexts = contexts;
        this.mailboxes = mailboxes;
        this.rank = rank;
        this.pollsSeen = new long[threads];
        this.stillSince = new long[threads];
        this.reported = new boolean[threads];
    }

    /** Stalls reported so far (tests and counters). */
    long reports() {
        return reports.get();
    }

    @Override
    public long doWork(long nowNanos) {
        if (nowNanos - lastLook < LOOK_NANOS) {
            return 0; // the agent looks at least every IDLE_LOOK_NANOS anyway
        }
        lastLook = nowNanos;
        for (int i = 0; i < pollsSeen.length; i++) {
            ThreadContext worker = contexts.workerContext(i);
            if (worker == null) {
                continue;
            }
            long polls = worker.pollsSeen();
            if (polls != pollsSeen[i] || stillSince[i] == 0) {
                pollsSeen[i] = polls;
                stillSince[i] = nowNanos;
                reported[i] = false;
                continue;
            }
            if (reported[i] || nowNanos - stillSince[i] < BLOCKED_NANOS || !worker.thread.isAlive()) {
                continue;
            }
            int waiting = waitingRequests(i);
            if (waiting > 0) {
                reported[i] = true;
                reports.incrementAndGet();
                report(i, worker.thread, waiting, nowNanos - stillSince[i]);
            }
        }
        return 0;
    }

    private int waitingRequests(int worker) {
        int waiting = 0;
        List<MailboxChannelSet.Served> served = mailboxes.servedBy(worker);
        for (MailboxChannelSet.Served channel : served) {
            waiting += channel.server().pendingRequests();
        }
        return waiting;
    }

    private void report(int worker, Thread thread, int waiting, long stalledNanos) {
        StringBuilder text = new StringBuilder("worker ").append(rank).append('/').append(worker).append(" (thread '")
                .append(thread.getName()).append("') has run no incoming call for ").append(stalledNanos / 1_000_000)
                .append(" ms while ").append(waiting).append(" callReturn request").append(waiting == 1 ? "" : "s")
                .append(" wait for it: it is blocked outside the fabric (for example in CompletableFuture.allOf(...)"
                        + ".join()), so callers waiting on it wait until their deadlines. Wait with fabric.awaitAll("
                        + "futures), or on a fabric future's own get()/join(), which run the worker's calls. Its stack:");
        for (StackTraceElement frame : thread.getStackTrace()) {
            text.append("\n\tat ").append(frame);
        }
        LOG.log(System.Logger.Level.WARNING, text.toString());
    }
}
