/**
 * The transport SPI: the minimum the invocation protocols need from memory that two processes can reach.
 *
 * <p>It is shaped after RDMA verbs so that the same protocol code runs over shared memory and over RDMA:
 * a process allocates {@link io.fabricrpc.api.LocalRegion local regions} that peers may write (or read),
 * describes them to peers with small {@link io.fabricrpc.api.RemoteRegion remote-region handles}, and
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
 *   <li>The first byte of a {@link io.fabricrpc.transport.Link#writePublished} becomes visible after the rest of its
 *       bytes, and a single byte never tears. An aligned {@link io.fabricrpc.transport.Link#writeLong} is
 *       single-copy atomic over shared memory, but an RDMA responder may place its bytes one by one (Soft-RoCE
 *       does): a protocol that reads a remotely written word either changes one byte at a time (the mailbox's
 *       ownership bits) or rejects impossible values (the messengers' consumed counts).</li>
 *   <li>A {@link io.fabricrpc.transport.Link#writeFirstByteAs} is one write as far as ordering goes: everything it
 *       writes lands after every earlier write of the link, whatever order its own bytes land in.</li>
 *   <li>Nothing is assumed about the order of unsynchronized writes of different threads, or on different links.</li>
 *   <li>The source range of a write may be reused once its ticket {@link io.fabricrpc.transport.Link#isComplete
 *       completes}; the destination range of a read holds the data once its ticket completes.</li>
 *   <li>A peer that dies or closes is reported: every operation and every wait that involves it ends with
 *       {@link io.fabricrpc.api.PeerFailedException} within the transport's detection bound.</li>
 * </ul>
 */
package io.fabricrpc.transport;
