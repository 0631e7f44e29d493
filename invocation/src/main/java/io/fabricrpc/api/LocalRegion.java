package io.fabricrpc.api;

import java.lang.foreign.MemorySegment;

/**
 * Memory of this process that the transport can move bytes from and into: registered memory under RDMA, a
 * mapped file under shared memory. Local code accesses it through {@link #segment()} (plain, VarHandle or
 * bulk access); peers reach it through {@link #remote()} within the granted {@link RemoteAccess}.
 *
 * <p>Thread-safe to share; closing it while peers still write into it is the owner's protocol error.
 *
 * <p><b>One segment class.</b> Every segment a transport hands out ({@link #segment()},
 * {@link io.fabricrpc.transport.Link#directWindow}) is {@linkplain #isPlainNative plain native}, of the class
 * arena-allocated memory has, whatever backs it (a mapping is {@code reinterpret}ed). The codec's capture writers
 * and invokers are shared by every call path of a process, and the JIT specializes each segment access to the
 * classes it has seen: a mapped segment next to arena memory made every access bimorphic (measured: benchmarks
 * README, plain native segments).
 */
public interface LocalRegion extends AutoCloseable {
    /**
     * {@return the region's memory for local access, {@linkplain #isPlainNative plain native}} Valid until
     * {@link #close()}.
     */
    MemorySegment segment();

    /**
     * Whether {@code segment} is of the one class the transports hand out (see the class doc).
     *
     * @param segment any segment
     * @return true if it is of the plain native segment class
     */
    static boolean isPlainNative(MemorySegment segment) {
        return segment.getClass() == PlainNative.CLASS;
    }

    /** {@return the handle peers use to address this region} */
    RemoteRegion remote();

    /** {@return the region's size in bytes} */
    default long length() {
        return segment().byteSize();
    }

    /** Releases the memory (deregisters, unmaps). Idempotent. */
    @Override
    void close();

    /** Holder of the plain native class (an interface's fields would be public). */
    final class PlainNative {
        private static final Class<?> CLASS = MemorySegment.ofAddress(0).getClass();

        private PlainNative() {
        }
    }
}
