package io.fabricrpc.invocation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabricrpc.api.ThreadId;
import java.lang.invoke.MethodHandles;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ReturnFutureTest {
    @Test
    void aWaitEndsOnlyOnceTheThreadThatClaimedTheReplyHasCompletedTheFuture() throws Exception {
        ReturnFuture future = new ReturnFuture(null, null, 0, new ThreadId(0, 1), false, Duration.ofSeconds(60));
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
}
