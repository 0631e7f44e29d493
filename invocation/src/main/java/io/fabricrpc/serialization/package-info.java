/**
 * Lambda serialization for remote invocation: {@link io.fabricrpc.serialization.CallEncoder} writes a call of an
 * {@code io.fabricrpc.api} lambda (function id, definition on first use per link, raw primitive captures, Kryo for
 * registered object captures) into a memory segment; {@link io.fabricrpc.serialization.CallDecoder} reads it and
 * invokes the implementation method from code generated once per definition ({@code CaptureCode});
 * {@link io.fabricrpc.serialization.ResultCodec} carries supplier results back. Wire format:
 * {@link io.fabricrpc.serialization.CallRecordDescriptor}. What may cross a link:
 * {@link io.fabricrpc.api.SerializationRegistry}.
 */
package io.fabricrpc.serialization;
