package io.fabricrpc.transport.rdma.spi;

import io.fabricrpc.api.TransportException;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One transport's regions from the kernel's pool of 2 MiB hugepages. A region of 2 MiB and more mapped from it needs
 * a few translation entries in the NIC instead of many for 4 KiB pages (Seriema 4.2); without free hugepages
 * ({@code vm.nr_hugepages = 0}, or all in use) {@link #map} returns null and the caller uses plain pages.
 * Thread-safe: the set of live hugepage regions is concurrent, and a region leaves it when its arena unmaps it.
 */
final class HugePages {
    static final long PAGE_BYTES = 2L << 20;
    private static final int PROT_READ_WRITE = 0x1 | 0x2;
    private static final int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;
    private static final int MAP_HUGETLB = 0x40000;
    private static final int MAP_HUGE_2MB = 21 << 26; // log2(page size) << MAP_HUGE_SHIFT
    private static final MethodHandle MMAP;
    private static final MethodHandle MUNMAP;
    private static final System.Logger LOG = System.getLogger("fabricrpc.rdma");

    static {
        Linker linker = Linker.nativeLinker();
        SymbolLookup libc = linker.defaultLookup();
        MMAP = linker.downcallHandle(libc.find("mmap").orElseThrow(), FunctionDescriptor.of(ValueLayout.ADDRESS,
                ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
        MUNMAP = linker.downcallHandle(libc.find("munmap").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_INT,
                ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
    }

    private final long endpointId;
    /** Start addresses of the live regions that are backed by hugepages. */
    private final Set<Long> regions = ConcurrentHashMap.newKeySet();
    private final AtomicInteger fallbacks = new AtomicInteger();

    HugePages(long endpointId) {
        this.endpointId = endpointId;
    }

    /** True if the live region starting at {@code address} was mapped here. */
    boolean backs(long address) {
        return regions.contains(address);
    }

    /**
     * Maps {@code bytes} (rounded up to whole hugepages) from the pool, unmapped when {@code arena} closes (after
     * deregistration); null if the pool has too few free pages now.
     */
    MemorySegment map(long bytes, Arena arena) {
        long mapped = (bytes + PAGE_BYTES - 1) / PAGE_BYTES * PAGE_BYTES;
        MemorySegment base;
        try {
            base = (MemorySegment) MMAP.invokeExact(MemorySegment.NULL, mapped, PROT_READ_WRITE,
                    MAP_PRIVATE_ANONYMOUS | MAP_HUGETLB | MAP_HUGE_2MB, -1, 0L);
        } catch (Throwable e) {
            throw new TransportException("mmap of " + mapped + " bytes of hugepages failed: " + e, e);
        }
        if (base.address() == -1L) { // MAP_FAILED: the pool cannot reserve that many pages now (ENOMEM)
            if (fallbacks.getAndIncrement() == 0) {
                LOG.log(System.Logger.Level.INFO, "rdma endpoint " + Long.toHexString(endpointId) + ": no "
                        + mapped / PAGE_BYTES + " free 2 MiB hugepages (" + free()
                        + "); regions of 2 MiB and more use plain pages (raise vm.nr_hugepages)");
            }
            return null;
        }
        long address = base.address();
        regions.add(address);
        LOG.log(System.Logger.Level.DEBUG, "rdma endpoint " + Long.toHexString(endpointId) + ": " + bytes
                + "-byte region backed by 2 MiB hugepages");
        return base.reinterpret(mapped, arena, segment -> {
            regions.remove(address);
            try {
                int result = (int) MUNMAP.invokeExact(segment, mapped);
                if (result != 0) {
                    LOG.log(System.Logger.Level.WARNING, "munmap of " + mapped + " bytes of hugepages at 0x"
                            + Long.toHexString(address) + " failed");
                }
            } catch (Throwable e) {
                throw new TransportException("munmap of hugepages failed: " + e, e);
            }
        }).asSlice(0, bytes);
    }

    private static String free() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("HugePages_Free:")) {
                    return "HugePages_Free " + line.substring("HugePages_Free:".length()).trim();
                }
            }
        } catch (IOException e) {
            // only for the message
        }
        return "HugePages_Free unknown";
    }
}
