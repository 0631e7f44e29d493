package io.fabricrpc.invocation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabricrpc.api.ThreadId;
import java.lang.invoke.MethodHandles;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class ReturnFutureTest {
    @Test
    void aWaitEndsOnlyOnceTheThreadThatClaimedTheReplyHasCompletedTheFuture() throws Exception {
        ReturnFuture future = new ReturnFuture(null, null, 0, new ThreadId(0, 1), false, System.nanoTime(),
                Duration.ofSeconds(60).toNanos());
        // Another thread has claimed the future (as a collector of its reply does) and is about to complete it.
        MethodHandles.privateLookupIn(ReturnFuture.class, MethodHandles.lookup())
                .findVarHandle(ReturnFuture.class, "claimed", int.class).setVolatile(future, 1);
        Thread completer = Thread.ofPlatform().start(() -> {
            try {
                Thread.sleep(200);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            future.complete(42L);
        });
        future.awaitUninterruptibly(); // callReturnAsync to the caller itself promises a done future after this
        assertTrue(future.isDone(), "the wait returned before the claiming thread completed the future");
        assertEquals(42L, future.getNow(null));
        completer.join(10_000);
    }

    /** A claimant that never completes (it died between claim and complete) does not hang its waiters. */
    @Test
    @Timeout(value = 60, threadMode = Timeout.ThreadMode.SEPARATE_THREAD) // without the bound, the wait spins forever
    void aClaimNeverCompletedFailsTheFutureAfterTheCallTimeoutAndATimedWaitEndsAtItsDeadline() throws Exception {
        ReturnFuture future = new ReturnFuture(null, null, 3, new ThreadId(0, 1), false, System.nanoTime(),
                Duration.ofMillis(200).toNanos());
        MethodHandles.privateLookupIn(ReturnFuture.class, MethodHandles.lookup())
                .findVarHandle(ReturnFuture.class, "claimed", int.class).setVolatile(future, 1);
        assertThrows(TimeoutException.class, () -> future.get(20, TimeUnit.MILLISECONDS));
        assertFalse(future.isDone(), "a timed wait shorter than callTimeout only times out");
        long start = System.nanoTime();
        future.awaitUninterruptibly();
        assertTrue(future.isCompletedExceptionally());
        ExecutionException e = assertThrows(ExecutionException.class, future::get);
        assertTrue(e.getCause().getMessage().contains("port 3) was claimed by a thread that did not complete it"),
                e.getCause().getMessage());
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(30), "bounded by callTimeout");
    }
}
