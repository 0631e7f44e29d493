package io.fabricrpc.transport.shm;

import io.fabricrpc.api.TransportException;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;

/**
 * {@code posix_fallocate} through the FFM API: the JDK has no way to back a file's pages at creation, and a sparse
 * tmpfs file faults (SIGBUS) at the first write into a page the file system cannot supply.
 */
final class NativeFiles {
    static final int ENOSPC = 28;
    private static final int O_RDWR = 2;
    private static final int O_CLOEXEC = 0x80000; // the same on x86-64 and AArch64 Linux

    private static final MethodHandle OPEN;
    private static final MethodHandle FALLOCATE;
    private static final MethodHandle CLOSE;
    private static final long ERRNO_OFFSET;
    private static final java.lang.foreign.StructLayout CALL_STATE = Linker.Option.captureStateLayout();

    static {
        Linker linker = Linker.nativeLinker();
        SymbolLookup libc = linker.defaultLookup();
        Linker.Option errno = Linker.Option.captureCallState("errno");
        OPEN = linker.downcallHandle(libc.find("open").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT), errno);
        FALLOCATE = linker.downcallHandle(libc.find("posix_fallocate").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG,
                        ValueLayout.JAVA_LONG));
        CLOSE = linker.downcallHandle(libc.find("close").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
        ERRNO_OFFSET = CALL_STATE.byteOffset(java.lang.foreign.MemoryLayout.PathElement.groupElement("errno"));
    }

    private NativeFiles() {
    }

    /** Backs {@code bytes} bytes of an existing file with storage: 0, or the errno (ENOSPC when full). */
    static int allocate(Path file, long bytes) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CALL_STATE);
            int fd = (int) OPEN.invokeExact(state, arena.allocateFrom(file.toString()), O_RDWR | O_CLOEXEC);
            if (fd < 0) {
                return state.get(ValueLayout.JAVA_INT, ERRNO_OFFSET);
            }
            try {
                return bytes == 0 ? 0 : (int) FALLOCATE.invokeExact(fd, 0L, bytes);
            } finally {
                int ignored = (int) CLOSE.invokeExact(fd);
            }
        } catch (Throwable e) {
            throw new TransportException("cannot back shared-memory file " + file + ": " + e, e);
        }
    }
}
