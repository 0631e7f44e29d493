/**
 * {@code fabric.transport=hybrid}: shared memory between the processes of one host, RDMA between hosts, behind one
 * {@link io.fabricrpc.transport.Transport} (see {@link io.fabricrpc.transport.rdma.hybrid.HybridTransport}).
 */
package io.fabricrpc.transport.rdma.hybrid;
