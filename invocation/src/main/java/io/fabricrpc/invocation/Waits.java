package io.fabricrpc.invocation;

import io.fabricrpc.api.DeadlineExceededException;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Future;

/**
 * {@code Fabric.awaitAll}: waits for any futures (the fabric's, or stages built on them with {@code thenCompose},
 * {@code thenCombine}, {@code allOf}, ...) while the waiting thread keeps the fabric moving: a worker runs its
 * incoming calls, and every waiter collects arrived replies. So workers that fan out to each other and wait here
 * cannot deadlock, whatever the shape of the futures. Bounded by its timeout.
 */
final class Waits {
    /** Failures named in the exception beyond the first, as suppressed ones. */
    private static final int MAX_SUPPRESSED = 8;

    private Waits() {
    }

    static void awaitAll(FabricRuntime runtime, Duration timeout, Collection<? extends Future<?>> futures) {
        long timeoutNanos = FabricRuntime.timeoutNanos(timeout);
        List<Future<?>> all = new ArrayList<>(futures); // a stable snapshot: indexes below refer to it
        long deadline = System.nanoTime() + timeoutNanos;
        IdleStrategy idle = new BackoffIdleStrategy(64, 16, 1_000, 100_000);
        int next = 0; // futures before it are done: done futures stay done
        for (int polls = 0; ; polls++) {
            while (next < all.size() && all.get(next).isDone()) {
                next++;
            }
            if (next == all.size()) {
                break;
            }
            runtime.help(); // a worker runs its incoming calls, the ones its peers' futures wait for among them
            int collected = runtime.returnCalls().pending().sweep();
            if ((polls & 63) == 0 && System.nanoTime() - deadline > 0) {
                int pending = 0;
                for (int i = next; i < all.size(); i++) {
                    pending += all.get(i).isDone() ? 0 : 1;
                }
                throw new DeadlineExceededException("awaitAll: " + pending + " of " + all.size() + " futures not done"
                        + " within " + timeoutNanos / 1_000_000 + " ms (the first pending is number " + next + ")",
                        true);
            }
            idle.idle(collected);
        }
        throwFirstFailure(all);
    }

    /** As {@code allOf(...).join()}: the first failure in the given order, later ones suppressed. */
    private static void throwFirstFailure(List<Future<?>> all) {
        CompletionException first = null;
        for (Future<?> future : all) {
            Throwable failure = switch (future.state()) {
                case FAILED -> future.exceptionNow();
                case CANCELLED -> new CancellationException("a future given to awaitAll was cancelled");
                default -> null;
            };
            if (failure == null) {
                continue;
            }
            if (first == null) {
                first = failure instanceof CompletionException c ? c : new CompletionException(failure);
            } else if (first.getSuppressed().length < MAX_SUPPRESSED) {
                first.addSuppressed(failure);
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
