/**
 * Public functional interfaces for remote invocation: the shapes a lambda sent to another thread or process may take.
 * Each extends {@link java.io.Serializable} so that javac emits serializable lambdas, from which the fabric reads
 * the definition once per class; the wire format itself is {@code io.fabricrpc.serialization.CallRecordDescriptor}.
 */
package io.fabricrpc.api;
