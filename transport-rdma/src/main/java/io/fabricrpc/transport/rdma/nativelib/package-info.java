/**
 * Loading this project's own {@code libdisni.so} (built from {@code src/main/c}, shipped inside the jar)
 * into the unmodified DiSNI 2.1 classes, so users set no {@code java.library.path}.
 * Entry point: {@link io.fabricrpc.transport.rdma.nativelib.DisniNativeLibrary#load()}.
 */
package io.fabricrpc.transport.rdma.nativelib;
