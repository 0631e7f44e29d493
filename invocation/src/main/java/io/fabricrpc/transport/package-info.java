/**
 * The transport SPI: the minimum the invocation protocols need from memory that two processes can reach.
 *
 * <p>It is shaped after RDMA verbs so that the same protocol code runs over shared memory and over RDMA:
 * a process allocates {@link io.fabricrpc.transport.LocalRegion local regions} that peers may write (or read),
 * describes them to peers with small {@link io.fabricrpc.transport.RemoteRegion remote-region handles}, and
 * moves bytes with one-sided {@link io.fabricrpc.transport.Link#write writes} and
 * {@link io.fabricrpc.transport.Link#read reads}. Small two-sided {@link io.fabricrpc.transport.Link#send
 * messages} carry setup that needs no prior negotiation (Seriema's "no-setup" service calls).
 *
 * <p>Guarantees every transport gives, and the only ones protocols may rely on:
 * <ul>
 *   <li>Writes (including {@link io.fabricrpc.transport.Link#writeLong}) issued on one link in happens-before
 *       order (one thread's program order, or threads that hand the work over through synchronization, as the
 *       aggregators do) become visible to the peer in that order: a peer that observes a later write with an
 *       acquiring load also observes every earlier one.</li>
 *   <li>An aligned {@link io.fabricrpc.transport.Link#writeLong}, and the 4-byte header of a
 *       {@link io.fabricrpc.transport.Link#writePublished}, are single-copy atomic: the peer never sees a torn
 *       value; the header of a {@code writePublished} becomes visible after the rest of its bytes.</li>
 *   <li>Nothing is assumed about the order of unsynchronized writes of different threads, or on different links.</li>
 *   <li>The source range of a write may be reused once its ticket {@link io.fabricrpc.transport.Link#isComplete
 *       completes}; the destination range of a read holds the data once its ticket completes.</li>
 *   <li>A peer that dies or closes is reported: every operation and every wait that involves it ends with
 *       {@link io.fabricrpc.transport.PeerFailedException} within the transport's detection bound.</li>
 * </ul>
 */
package io.fabricrpc.transport;
