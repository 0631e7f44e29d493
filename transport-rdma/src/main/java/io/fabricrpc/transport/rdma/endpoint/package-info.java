/** Additions to DiSNI's endpoint API that keep its waits bounded and its failures explicit. */
package io.fabricrpc.transport.rdma.endpoint;
