/**
 * The transport SPI over RDMA verbs (DiSNI): {@link io.fabricrpc.transport.rdma.spi.RdmaTransport} and its links.
 *
 * <h2>A link in parts</h2>
 * A link is one RC queue pair. {@code RdmaLink} is the {@code Link} adapter: it checks an operation's regions once
 * and hands it on. {@code RdmaSendQueue} numbers, signals and posts work requests and reaps the CQ;
 * {@code RdmaWrites} builds the one-sided operations' requests; {@code RdmaReceiveRing} keeps the receive buffers
 * and the message credits; {@code RdmaHandshake} exchanges the HELLO; {@code RdmaLiveness} records failure and runs
 * the heartbeat. The memory layout they share is {@code LinkMemoryDescriptor}.
 *
 * <h2>Ordering</h2>
 * Every operation of a link is a work request on the same RC QP. An RC QP executes its send queue in order and the
 * responder processes the request packets in PSN order, so writes (and the 8-byte RDMA WRITE of {@code writeLong})
 * are placed in the peer's memory in issue order: on rxe the responder copies each packet into memory before it
 * processes the next one; on InfiniBand/RoCE HCAs writes of one QP are placed in order in practice (PCIe posted
 * writes are not reordered), though the IB specification itself only promises order for the completion of whole
 * messages. Protocols rely on exactly this: data written, then a flag written later on the same link. The flag is 8
 * aligned bytes inside one packet, but rxe copies a WRITE into memory byte by byte, so a reader may see it torn:
 * publications therefore use a 1-byte flag ({@code writePublished}: the rest, then the first byte as its own later
 * 1-byte WRITE), and 8-byte counters are read by peers that can reject impossible values. Writes from different
 * threads are ordered by the QP lock's order of posting, which the SPI does not promise anyway.
 *
 * <h2>Completion tickets and selective signaling</h2>
 * (Seriema §4.1.) Each work request gets the next WR number as its ticket. Only every {@code signalInterval}-th
 * request is signaled (plus those that must be: sends, flushes, loopback operations); a signaled completion with WR
 * number {@code w} means every request {@code <= w} has completed, since an RC send queue completes in order.
 * {@code isComplete} is true once such a completion with {@code w >= ticket} was reaped; {@code awaitCompletion}
 * posts a signaled flush (an 8-byte RDMA READ of the peer's consumed counter) if no signaled request at or after the
 * ticket is outstanding, then polls. At most {@code sqDepth} requests are outstanding: a poster whose request would
 * exceed that reaps completions first; since {@code signalInterval < sqDepth}, a full window always holds a signaled
 * request, so this terminates. A pair (data, then its flag or first byte) is two chained WRs posted with one call;
 * only the second may be signaled, and its WR number is the ticket.
 *
 * <h2>The flush number</h2>
 * The send queue's {@code completed} is the link's flush number in WR units: it only grows, it is written by whichever
 * thread reaps (under {@code cqLock.tryLock}, so no thread ever waits for another to advance it), and any thread
 * reads it with one volatile load. Memory tagged with a ticket {@code <= completed} is reusable: a circular buffer
 * frees every unit tagged below the new value with that single store and no per-buffer bookkeeping. Posting itself is
 * serialized per QP ({@code qpLock}, held only to number and post one request, or one pair): the WR number must be
 * assigned in posting order for "a signaled completion covers every earlier number" to hold, and the verbs provider
 * serializes posts to one QP internally anyway. The link's own scratch slots follow the same rule: slot
 * {@code t mod sqDepth} is written only after {@code reserve} made room for ticket {@code t}, that is after ticket
 * {@code t - sqDepth} completed.
 *
 * <h2>Two-sided messages and credits</h2>
 * Each side posts {@code recvDepth} receive buffers of one slot each, in ring order, and reposts a slot after
 * delivering it, so receives complete in ring order. It counts reposted slots in the {@code consumed} word of its
 * control block. A sender may have at most {@code recvDepth + consumed} messages sent; when its cached view says the
 * peer has no free buffer it refreshes the view with a synchronous RDMA READ of that word, and returns {@code false}
 * if there is still none. A SEND therefore never meets a missing receive (no RNR). {@code send} returns once the SEND
 * completed, that is once the message is in the peer's receive buffer, so the peer's next {@code pollMessages} sees
 * it. The first SEND in each direction is the HELLO; it takes slot 0 of the ring, and the link is ready (its peer
 * fields published by one volatile write) once the peer's HELLO was checked and slot 0 reposted.
 *
 * <h2>Threads and locks</h2>
 * Links are thread-safe. Posting takes one lock per QP ({@code qpLock}); the CQ is reaped by whichever thread polls
 * (under {@code cqLock}, {@code tryLock}, never while waiting for the QP lock). Receive buffers are reposted only by
 * the thread that delivers messages (the transport's single {@code pollMessages} caller), under {@code cqLock} so that
 * teardown cannot destroy the QP under a post, and by the reaper for the handshake only, before the link is ready.
 * Teardown takes both locks, {@code qpLock} first, so it waits for the post or reap in progress and every later one
 * sees the closed flag. Prepared DiSNI calls (one per operation kind, one per receive slot) are reused: the hot path
 * allocates nothing.
 *
 * <h2>Liveness</h2>
 * A link fails on an error completion, a CM DISCONNECTED event, an operation that does not complete within
 * {@code rdma.operationTimeoutMillis}, or the close of either endpoint; {@code checkAlive} is a volatile read. A
 * silent peer (host gone, no CM event) is found by the transport's heartbeat: an idle link is probed with a signaled
 * 8-byte READ every {@code rdma.heartbeatMillis}; a probe to a vanished host ends in a retry-exceeded error
 * completion, and requests that make no progress for {@code rdma.operationTimeoutMillis} fail the link even when no
 * thread waits for them. An unsignaled tail is made signaled by the heartbeat, so that its completion, or its error,
 * shows up at all.
 *
 * <h2>Teardown</h2>
 * Three steps, in this order: fail the link (every waiter ends), destroy the QP and CQ under both locks (the transport,
 * per link), and only once DiSNI's group is closed free the prepared calls, deregister and free the memory. If
 * destroying the QP fails, its receives may still target the link's memory: the memory is leaked, never freed; the
 * same if deregistration fails.
 */
package io.fabricrpc.transport.rdma.spi;
