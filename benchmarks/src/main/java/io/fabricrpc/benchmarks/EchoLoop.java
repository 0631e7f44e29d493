package io.fabricrpc.benchmarks;

import org.agrona.concurrent.IdleStrategy;

import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A platform thread that polls an {@link EchoService} with an idle strategy while active, and sleeps in short
 * parks while paused. Thread-safe control from any thread; a failure of the echo side is rethrown by the next
 * control call.
 */
final class EchoLoop implements EchoControl {
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static final long PAUSED_PARK_NANOS = TimeUnit.MICROSECONDS.toNanos(200);
    private static final long CONTROL_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final EchoService service;
    private final IdleStrategy idle;
    private final int cpu;
    private final Thread thread;
    private volatile boolean active;
    private volatile boolean polling;
    private volatile boolean stopped;
    private volatile Throwable failure;

    /** @param cpu the CPU to pin the echo thread to, or -1 to leave it to the scheduler */
    EchoLoop(String name, EchoService service, IdleStrategy idle, int cpu) {
        this.service = service;
        this.idle = idle;
        this.cpu = cpu;
        this.thread = Thread.ofPlatform().daemon().name(name).start(this::run);
        if (!THREADS.isThreadAllocatedMemorySupported() || !THREADS.isThreadAllocatedMemoryEnabled()) {
            throw new IllegalStateException("this JVM does not count per-thread allocation");
        }
    }

    private void run() {
        try {
            if (cpu >= 0) {
                CpuAffinity.pinCurrentThread(cpu);
            }
            while (!stopped) {
                if (!active) {
                    polling = false;
                    LockSupport.parkNanos(PAUSED_PARK_NANOS);
                    continue;
                }
                polling = true;
                idle.idle(service.poll());
            }
        } catch (Throwable e) {
            failure = e;
        } finally {
            polling = false;
        }
    }

    @Override
    public void activate() {
        active = true;
        awaitPolling(true);
    }

    @Override
    public void pause() {
        active = false;
        awaitPolling(false);
    }

    private void awaitPolling(boolean expected) {
        long start = System.nanoTime();
        while (polling != expected) {
            checkHealthy();
            if (System.nanoTime() - start > CONTROL_TIMEOUT_NANOS) {
                throw new IllegalStateException("echo thread " + thread.getName() + " did not "
                        + (expected ? "start" : "stop") + " polling within 10 s");
            }
            LockSupport.parkNanos(50_000);
        }
        checkHealthy();
    }

    void checkHealthy() {
        Throwable e = failure;
        if (e != null) {
            throw new IllegalStateException("echo thread " + thread.getName() + " failed: " + e, e);
        }
        if (!thread.isAlive() && !stopped) {
            throw new IllegalStateException("echo thread " + thread.getName() + " ended unexpectedly");
        }
    }

    @Override
    public long allocatedBytes() {
        return THREADS.getThreadAllocatedBytes(thread.threadId());
    }

    /** True once the loop has ended (stopped or failed). */
    boolean isDone() {
        return !thread.isAlive();
    }

    Throwable failure() {
        return failure;
    }

    @Override
    public void close() {
        stopped = true;
        try {
            thread.join(TimeUnit.SECONDS.toMillis(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
