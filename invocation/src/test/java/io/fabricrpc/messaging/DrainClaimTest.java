package io.fabricrpc.messaging;

import io.fabricrpc.api.MessagingException;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DrainClaimTest {
    /** Plain fields written only under the claim: a lost update or a torn pair shows two holders at once. */
    private long count;
    private long mirror;

    @Test
    void aSenderAndAnAgentNeverHoldItTogether() throws Exception {
        DrainClaim claim = new DrainClaim();
        long rounds = 200_000;
        AtomicReference<String> error = new AtomicReference<>();
        Thread agent = new Thread(() -> {
            for (long i = 0; i < rounds; ) {
                if (claim.tryClaim()) { // the agent never waits
                    try {
                        step(error);
                        i++;
                    } finally {
                        claim.release();
                    }
                }
            }
        });
        agent.start();
        for (long i = 0; i < rounds; i++) {
            claim.claim(() -> "test");
            try {
                step(error);
            } finally {
                claim.release();
            }
        }
        agent.join();
        assertNull(error.get());
        assertEquals(2 * rounds, count);
        assertEquals(4 * rounds, claim.lvPosition(), "two position steps per claim: monotonic, even when free");
    }

    private void step(AtomicReference<String> error) {
        long c = count;
        if (mirror != c) {
            error.compareAndSet(null, "count " + c + " but mirror " + mirror);
        }
        count = c + 1;
        mirror = c + 1;
    }

    @Test
    void itIsReentrantForItsHolderAndRefusedToOthersMeanwhile() throws Exception {
        DrainClaim claim = new DrainClaim();
        claim.claim(() -> "test");
        assertTrue(claim.tryClaim(), "the holder again (a call run while waiting sends on the same channel)");
        claim.release();
        assertTrue(claim.heldByCurrentThread(), "still held after the inner release");
        boolean[] other = new boolean[1];
        Thread t = new Thread(() -> other[0] = claim.tryClaim());
        t.start();
        t.join();
        assertFalse(other[0]);
        claim.release();
        assertFalse(claim.heldByCurrentThread());
        assertEquals(2, claim.lvPosition());
    }

    @Test
    void aWaitForAClaimThatIsNeverReleasedEndsWithTheHolderNamed() throws Exception {
        DrainClaim claim = new DrainClaim(200_000_000L);
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(1);
        Thread holder = new Thread(() -> {
            claim.claim(() -> "holder");
            held.countDown();
            try {
                done.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            claim.release();
        });
        holder.start();
        held.await();
        MessagingException e = assertThrows(MessagingException.class, () -> claim.claim(() -> "channel 1/0 -> 2/1"));
        assertTrue(e.getMessage().contains("channel 1/0 -> 2/1") && e.getMessage().contains("200 ms")
                && e.getMessage().contains("position 1"), e.getMessage());
        done.countDown();
        holder.join();
        claim.claim(() -> "test");
        claim.release();
    }
}
