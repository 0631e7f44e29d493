/** Helpers that turn DiSNI's raw verbs results into clear Java errors. */
package io.fabricrpc.transport.rdma.verbs;
