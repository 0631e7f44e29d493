/**
 * Firehose (Bell and Bonachea; Bell and Nishtala, Firehose-SMP) for the RDMA transport: a bounded registration cache
 * for memory the application owns ({@link io.fabricrpc.transport.rdma.firehose.FirehoseCache}, on verbs through
 * {@link io.fabricrpc.transport.rdma.firehose.RdmaFirehose}), and remote firehoses: per peer a bounded number of
 * mappings of the peer's exposed memory, moved with a two-sided service call
 * ({@link io.fabricrpc.transport.rdma.firehose.RemoteFirehoses}, {@link io.fabricrpc.transport.rdma.firehose.FirehoseServer},
 * wire format in {@link io.fabricrpc.transport.rdma.firehose.FirehoseMessages}).
 */
package io.fabricrpc.transport.rdma.firehose;
