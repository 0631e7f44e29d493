/**
 * Registered-memory management after Seriema §4.2, written only against the transport SPI (so it runs over shared
 * memory and RDMA alike).
 *
 * <ul>
 *   <li>{@link io.fabricrpc.memory.SlabPool}: large regions (default 2 MiB) obtained once from
 *       {@link io.fabricrpc.transport.Transport#allocate}: one registration per slab.</li>
 *   <li>{@link io.fabricrpc.memory.CircularAllocator}: a ring of fixed-size {@link io.fabricrpc.memory.Unit units}
 *       carved from slabs. A unit is tagged after use with the (link, ticket) of the last operation that read from
 *       it and is reused once that ticket completes: the flush-number recycling of §4.1, so one completion frees
 *       every unit tagged with an earlier ticket of the same link.</li>
 *   <li>{@link io.fabricrpc.memory.LinearCircularAllocator}: the same ring, handing out variable-size segments
 *       inside units (bump pointer).</li>
 *   <li>{@link io.fabricrpc.memory.BestFitAllocator}: a thread-safe general allocator over slabs.</li>
 *   <li>{@link io.fabricrpc.memory.RemoteAllocationService}: a no-setup service call that allocates memory in a
 *       peer process and returns a {@link io.fabricrpc.api.RemoteRegion} for one-sided operations.</li>
 * </ul>
 *
 * <p>Nothing here lives in shared or registered memory except the users' bytes; the only wire format is the
 * service's messages, described in {@link io.fabricrpc.memory.RemoteAllocationMessages}.
 */
package io.fabricrpc.memory;
