package io.fabricrpc.transport;

import io.fabricrpc.api.TransportException;

import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteRegion;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A real transport whose one-sided writes land the way the transport SPI allows at worst: later, from a wire thread
 * per link, one write after another in issue order, but each write's bytes in random order, in pieces of 1 to 8 bytes
 * (a responder such as rxe may copy a WRITE byte by byte), with pauses between pieces. Links map no peer memory, so
 * protocols take their RDMA path. A protocol that reads bytes before it may, or trusts a header that is still
 * landing, fails here where a synchronous copy would hide it.
 */
public final class ScramblingTransport extends ForwardingTransport {
    private final List<ExecutorService> wires = new ArrayList<>();

    public ScramblingTransport(Transport transport) {
        super(transport);
    }

    @Override
    public synchronized Link connect(EndpointAddress peer) {
        ExecutorService wire = Executors.newSingleThreadExecutor(task -> {
            Thread thread = new Thread(task, "scrambling-wire");
            thread.setDaemon(true);
            return thread;
        });
        wires.add(wire);
        return new ScramblingLink(transport.connect(peer), wire);
    }

    @Override
    public void close() {
        synchronized (this) {
            for (ExecutorService wire : wires) {
                wire.shutdown();
                try {
                    wire.awaitTermination(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        transport.close();
    }

    private static final class ScramblingLink extends ForwardingLink {
        private final ExecutorService wire;
        private long issued;
        private volatile long landed;
        private volatile RuntimeException wireFailure;

        ScramblingLink(Link link, ExecutorService wire) {
            super(link);
            this.wire = wire;
        }

        /** Queues a placement; the wire runs them in issue order, each after a release fence. */
        private synchronized long place(Runnable placement) {
            long ticket = ++issued;
            wire.execute(() -> {
                try {
                    // Release: every byte of earlier writes is visible before any byte of this one.
                    VarHandle.releaseFence();
                    placement.run();
                } catch (RuntimeException e) {
                    wireFailure = e;
                } finally {
                    landed = ticket;
                }
            });
            return ticket;
        }

        @Override
        public long write(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length) {
            link.checkAlive();
            dst.checkRange("write", dstOffset, length);
            return place(() -> {
                // The source is read as the bytes land, as a NIC reads registered memory: a sender that reuses
                // its source before the ticket completes corrupts what arrives.
                // Pieces of 1 to 8 bytes: a 4-byte header is often split, and long writes still land quickly.
                ThreadLocalRandom random = ThreadLocalRandom.current();
                long[] pieces = new long[(int) length];
                int count = 0;
                for (long at = 0; at < length; ) {
                    long size = Math.min(length - at, 1 + random.nextInt(8));
                    pieces[count++] = at << 32 | size;
                    at += size;
                }
                int[] order = shuffled(count);
                for (int i = 0; i < count; i++) {
                    long piece = pieces[order[i]];
                    long at = piece >>> 32;
                    link.write(src, srcOffset + at, dst, dstOffset + at, piece & 0xFFFF_FFFFL);
                    if ((i & 7) == 7 && random.nextInt(4) == 0) {
                        // Widen the window in which a reader sees the write half landed. A spin, not a yield: a NIC
                        // keeps placing while the host's threads spin, and a yielding wire starved on 2 vCPUs.
                        for (int spin = 0; spin < 256; spin++) {
                            Thread.onSpinWait();
                        }
                    }
                }
            });
        }

        private static int[] shuffled(int length) {
            int[] order = new int[length];
            for (int i = 0; i < length; i++) {
                order[i] = i;
            }
            ThreadLocalRandom random = ThreadLocalRandom.current();
            for (int i = length - 1; i > 0; i--) {
                int j = random.nextInt(i + 1);
                int swap = order[i];
                order[i] = order[j];
                order[j] = swap;
            }
            return order;
        }

        @Override
        public long writeLong(RemoteRegion dst, long dstOffset, long value) {
            dst.checkRange("writeLong", dstOffset, Long.BYTES);
            return place(() -> link.writeLong(dst, dstOffset, value));
        }

        @Override
        public long writePublishedInline(MemorySegment src, long srcOffset, RemoteRegion dst, long dstOffset, int length) {
            Link.checkInline(dst, dstOffset, length);
            MemorySegment copy = MemorySegment.ofArray(src.asSlice(srcOffset, length).toArray(ValueLayout.JAVA_BYTE));
            return place(() -> link.writePublishedInline(copy, 0, dst, dstOffset, length));
        }

        @Override
        public long read(RemoteRegion src, long srcOffset, LocalRegion dst, long dstOffset, long length) {
            awaitCompletion(issuedSoFar());
            return link.read(src, srcOffset, dst, dstOffset, length);
        }

        private synchronized long issuedSoFar() {
            return issued;
        }

        @Override
        public boolean isComplete(long ticket) {
            RuntimeException failure = wireFailure;
            if (failure != null) {
                throw failure;
            }
            return landed >= ticket;
        }

        @Override
        public boolean isBacklogged(long ticket) {
            return !isComplete(ticket);
        }

        @Override
        public void awaitCompletion(long ticket) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!isComplete(ticket)) {
                link.checkAlive();
                if (System.nanoTime() > deadline) {
                    throw new TransportException("scrambling wire: write " + ticket + " not landed after 30 s");
                }
                // Yield, not spin: the writes awaited are placed by the wire thread, which a spinning waiter (with a
                // spinning receiver and a pushing thread on 2 vCPUs) would starve.
                Thread.yield();
            }
        }
    }
}
