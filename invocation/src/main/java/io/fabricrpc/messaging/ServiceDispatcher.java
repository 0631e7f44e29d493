package io.fabricrpc.messaging;

import io.fabricrpc.api.MessagingException;

import io.fabricrpc.transport.Link;
import io.fabricrpc.transport.MessageHandler;
import io.fabricrpc.transport.Transport;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The process's service thread: receives two-sided messages (Seriema's send-based, no-setup service calls) and
 * dispatches them by type. Also correlates requests with replies for callers that wait for an answer.
 * A message of an unknown type, or a handler that throws, is reported to the error listener and the loop goes on.
 */
public final class ServiceDispatcher implements AutoCloseable {
    private final Transport transport;
    /** Copy-on-write (registration is rare); an int-keyed map, so dispatching boxes nothing. */
    private volatile Int2ObjectHashMap<MessageHandler> handlers = new Int2ObjectHashMap<>();
    private final ConcurrentHashMap<Long, CompletableFuture<byte[]>> pending = new ConcurrentHashMap<>();
    private final AtomicLong requestIds = new AtomicLong();
    private final MessageHandler dispatch = this::dispatch;
    private volatile Consumer<Throwable> errorListener = e -> System.getLogger("fabricrpc.service")
            .log(System.Logger.Level.ERROR, e.getMessage(), e);
    private volatile boolean running;
    private Thread thread;

    public ServiceDispatcher(Transport transport) {
        this.transport = transport;
    }

    public synchronized void register(int type, MessageHandler handler) {
        if (handlers.containsKey(type)) {
            throw new IllegalStateException("message type 0x" + Integer.toHexString(type) + " already has a handler");
        }
        Int2ObjectHashMap<MessageHandler> copy = new Int2ObjectHashMap<>(handlers);
        copy.put(type, handler);
        handlers = copy; // volatile: the service thread sees the complete map
    }

    public void onError(Consumer<Throwable> listener) {
        this.errorListener = listener;
    }

    /** Starts the daemon service thread (spins briefly, then parks up to 1 ms when idle). */
    public synchronized ServiceDispatcher start() {
        if (thread == null) {
            running = true;
            thread = Thread.ofPlatform().daemon().name("fabricrpc-service-" + Long.toHexString(transport.endpointId()))
                    .start(this::run);
        }
        return this;
    }

    private void run() {
        IdleStrategy idle = new BackoffIdleStrategy(100, 10, 10_000, 1_000_000);
        while (running) {
            int delivered;
            try {
                delivered = transport.pollMessages(dispatch, 64);
            } catch (Throwable e) {
                if (!running) {
                    return;
                }
                errorListener.accept(e); // an Error in one handler (a memory fault) does not end the service
                delivered = 0;
            }
            idle.idle(delivered);
        }
    }

    /** Delivers one message to its type's handler, as the service thread does (fabric-free harnesses call it). */
    public void dispatch(Link from, int type, MemorySegment payload) {
        MessageHandler handler = handlers.get(type);
        if (handler == null) {
            errorListener.accept(new MessagingException("service message of unknown type 0x"
                    + Integer.toHexString(type) + " (" + payload.byteSize() + " bytes) from endpoint "
                    + Long.toHexString(from.peerId()) + " dropped"));
            return;
        }
        try {
            handler.onMessage(from, type, payload);
        } catch (RuntimeException e) {
            errorListener.accept(new MessagingException("service handler for type 0x" + Integer.toHexString(type)
                    + " failed on a message from endpoint " + Long.toHexString(from.peerId()) + ": " + e, e));
        }
    }

    /** A fresh id for a request whose reply will be passed to {@link #complete}. */
    public long newRequest() {
        long id = requestIds.incrementAndGet();
        pending.put(id, new CompletableFuture<>());
        return id;
    }

    /**
     * Hands a reply to the caller of {@code requestId} (which may not be waiting yet: {@link #await} removes the
     * entry, so an early reply is kept); a reply to an unknown or expired request is reported.
     */
    public void complete(long requestId, MemorySegment reply) {
        CompletableFuture<byte[]> future = pending.get(requestId);
        if (future == null) {
            errorListener.accept(new MessagingException("reply to unknown or expired request " + requestId));
            return;
        }
        future.complete(reply.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
    }

    /**
     * Waits for the reply to {@code requestId}, checking {@code peer}'s liveness every few milliseconds.
     *
     * @throws MessagingException on timeout (naming what was awaited)
     */
    public byte[] await(long requestId, Link peer, long timeoutNanos, String what) {
        CompletableFuture<byte[]> future = pending.get(requestId);
        if (future == null) {
            throw new IllegalStateException("no pending request " + requestId);
        }
        long deadline = System.nanoTime() + timeoutNanos;
        try {
            while (true) {
                peer.checkAlive();
                try {
                    return future.get(5, TimeUnit.MILLISECONDS);
                } catch (TimeoutException e) {
                    if (System.nanoTime() - deadline > 0) {
                        throw new MessagingException("no reply to " + what + " (request " + requestId + ") from endpoint "
                                + Long.toHexString(peer.peerId()) + " within " + timeoutNanos / 1_000_000 + " ms");
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new MessagingException("interrupted while waiting for " + what);
        } catch (ExecutionException e) {
            throw new MessagingException(what + " failed: " + e.getCause(), e.getCause());
        } finally {
            pending.remove(requestId);
        }
    }

    public Transport transport() {
        return transport;
    }

    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            running = false;
            t = thread;
        }
        if (t != null) {
            try {
                t.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        pending.values().forEach(f -> f.completeExceptionally(new MessagingException("service dispatcher closed")));
    }

    @Override
    public String toString() {
        return "ServiceDispatcher" + Arrays.toString(handlers.keySet().toArray());
    }
}
