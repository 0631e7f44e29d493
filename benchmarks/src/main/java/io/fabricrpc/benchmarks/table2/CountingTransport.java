package io.fabricrpc.benchmarks.table2;

import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import io.fabricrpc.api.RemoteRegion;
import io.fabricrpc.transport.EndpointAddress;
import io.fabricrpc.transport.Link;
import io.fabricrpc.transport.LinkStatistics;
import io.fabricrpc.transport.MessageHandler;
import io.fabricrpc.transport.Transport;
import io.fabricrpc.transport.TransportProvider;
import io.fabricrpc.transport.Transports;

import java.lang.foreign.MemorySegment;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The transport {@code counted} ({@code fabric.transport=counted}): another transport ({@code fabric.countedInner},
 * default {@code shm}) whose links count, per process, what an RDMA NIC would be asked to do: post calls (one
 * doorbell each), work requests, payload bytes and completion checks; and, where the inner link keeps them, its own
 * work requests and signaled completions ({@link LinkStatistics}). Every operation goes to the inner link unchanged,
 * so the protocols take the same path (over shm with {@code shm.directWindows=false}, RDMA's staged path).
 */
public final class CountingTransport implements Transport {
    public static final String KIND = "counted";
    public static final String INNER_KEY = "fabric.countedInner";

    /** The process-wide counts (all counted links of all endpoints of this JVM). */
    public static final class Counts {
        static final LongAdder POSTS = new LongAdder();
        static final LongAdder WORK_REQUESTS = new LongAdder();
        static final LongAdder BYTES = new LongAdder();
        static final LongAdder CHECKS = new LongAdder();
        static final Map<Link, LinkStatistics> INNER = new ConcurrentHashMap<>();

        private Counts() {
        }

        /**
         * {posts, work requests, bytes, completion checks, inner work requests, inner signaled completions, inner
         * completion-queue polls}.
         */
        public static long[] snapshot() {
            long innerWrs = 0;
            long innerSignaled = 0;
            long innerPolls = 0;
            for (LinkStatistics s : INNER.values()) {
                innerWrs += s.loWritesPosted();
                innerSignaled += s.loSignaledCompletions();
                innerPolls += Math.max(0, s.loCompletionQueuePolls());
            }
            return new long[] {POSTS.sum(), WORK_REQUESTS.sum(), BYTES.sum(), CHECKS.sum(), innerWrs, innerSignaled,
                    innerPolls};
        }
    }

    /** Found by {@link java.util.ServiceLoader} through {@code META-INF/services}. */
    public static final class Provider implements TransportProvider {
        @Override
        public String kind() {
            return KIND;
        }

        @Override
        public Transport open(Map<String, String> config) {
            Map<String, String> inner = new HashMap<>(config);
            inner.put(Transports.KIND_KEY, config.getOrDefault(INNER_KEY, "shm"));
            return new CountingTransport(Transports.open(inner));
        }
    }

    private final Transport inner;
    private final Map<Link, CountingLink> links = new ConcurrentHashMap<>();

    CountingTransport(Transport inner) {
        this.inner = inner;
    }

    @Override
    public String kind() {
        return KIND;
    }

    @Override
    public long endpointId() {
        return inner.endpointId();
    }

    @Override
    public EndpointAddress address() {
        return new EndpointAddress(KIND, inner.address().bytes());
    }

    @Override
    public LocalRegion allocate(long bytes, RemoteAccess access) {
        return inner.allocate(bytes, access);
    }

    @Override
    public Link connect(EndpointAddress peer) {
        return wrap(inner.connect(new EndpointAddress(inner.kind(), peer.bytes())));
    }

    private CountingLink wrap(Link link) {
        return links.computeIfAbsent(link, l -> {
            if (l.statistics() != null) {
                Counts.INNER.put(l, l.statistics());
            }
            return new CountingLink(l);
        });
    }

    @Override
    public int maxMessageSize() {
        return inner.maxMessageSize();
    }

    @Override
    public int pollMessages(MessageHandler handler, int limit) {
        return inner.pollMessages((from, type, payload) -> handler.onMessage(wrap(from), type, payload), limit);
    }

    @Override
    public boolean memoryFault(Throwable fault) {
        return inner.memoryFault(fault);
    }

    @Override
    public void onEndpointFault(java.util.function.Consumer<String> listener) {
        inner.onEndpointFault(listener);
    }

    @Override
    public void close() {
        inner.close();
    }

    /** Counts each posting call as RDMA would post it (a chained pair is one doorbell, two work requests). */
    private static final class CountingLink implements Link {
        private final Link link;

        CountingLink(Link link) {
            this.link = link;
        }

        private static void post(int workRequests, long bytes) {
            Counts.POSTS.increment();
            Counts.WORK_REQUESTS.add(workRequests);
            Counts.BYTES.add(bytes);
        }

        @Override
        public long peerId() {
            return link.peerId();
        }

        @Override
        public EndpointAddress peerAddress() {
            return link.peerAddress();
        }

        @Override
        public long write(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length) {
            post(1, length);
            return link.write(src, srcOffset, dst, dstOffset, length);
        }

        @Override
        public long writeLong(RemoteRegion dst, long dstOffset, long value) {
            post(1, Long.BYTES);
            return link.writeLong(dst, dstOffset, value);
        }

        @Override
        public long writeAndFlag(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length,
                                 long flagOffset, long flagValue) {
            post(2, length + Long.BYTES);
            return link.writeAndFlag(src, srcOffset, dst, dstOffset, length, flagOffset, flagValue);
        }

        @Override
        public long writePublished(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length) {
            post(length > 1 ? 2 : 1, length);
            return link.writePublished(src, srcOffset, dst, dstOffset, length);
        }

        @Override
        public long writeFirstByteAs(LocalRegion src, long srcOffset, RemoteRegion dst, long dstOffset, long length,
                                     byte first) {
            post(1, length); // one gathering WRITE
            return link.writeFirstByteAs(src, srcOffset, dst, dstOffset, length, first);
        }

        @Override
        public long writePublishedInline(MemorySegment src, long srcOffset, RemoteRegion dst, long dstOffset,
                                         int length) {
            post(length == 1 ? 1 : 2, length);
            return link.writePublishedInline(src, srcOffset, dst, dstOffset, length);
        }

        @Override
        public MemorySegment directWindow(RemoteRegion region) {
            return link.directWindow(region);
        }

        @Override
        public void whenFailed(Runnable hook) {
            link.whenFailed(hook); // it forwards windows, so it forwards what tells their senders to look
        }

        @Override
        public long read(RemoteRegion src, long srcOffset, LocalRegion dst, long dstOffset, long length) {
            post(1, length);
            return link.read(src, srcOffset, dst, dstOffset, length);
        }

        @Override
        public boolean send(int type, MemorySegment payload, long offset, int length) {
            boolean sent = link.send(type, payload, offset, length);
            if (sent) {
                post(1, length);
            }
            return sent;
        }

        @Override
        public boolean isComplete(long ticket) {
            Counts.CHECKS.increment();
            return link.isComplete(ticket);
        }

        @Override
        public boolean isBacklogged(long ticket) {
            Counts.CHECKS.increment();
            return link.isBacklogged(ticket);
        }

        @Override
        public void awaitCompletion(long ticket) {
            Counts.CHECKS.increment();
            link.awaitCompletion(ticket);
        }

        @Override
        public void checkAlive() {
            link.checkAlive();
        }

        @Override
        public boolean isAlive() {
            return link.isAlive();
        }

        @Override
        public void fence(String reason) {
            link.fence(reason);
        }

        @Override
        public LinkStatistics statistics() {
            return link.statistics();
        }
    }
}
