package io.fabricrpc.transport.rdma.spi;

import io.fabricrpc.memory.SlabPool;
import io.fabricrpc.transport.Link;
import io.fabricrpc.api.LocalRegion;
import io.fabricrpc.api.RemoteAccess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Regions of 2 MiB and more come from hugepages when the system has free ones, plain pages otherwise; both carry
 * one-sided writes. Sets {@code vm.nr_hugepages} (root in the guest) and restores it afterwards.
 */
@EnabledIf("io.fabricrpc.transport.rdma.RdmaTestSupport#rdmaAvailable")
class RdmaHugePageTest {
    private static final Path NR_HUGEPAGES = Path.of("/proc/sys/vm/nr_hugepages");
    private static final long MIB2 = 2L << 20;

    private RdmaTransport a;
    private RdmaTransport b;
    private String original;

    @BeforeEach
    void open() throws IOException {
        original = Files.readString(NR_HUGEPAGES).trim();
        a = (RdmaTransport) RdmaFixture.INSTANCE.open();
        b = (RdmaTransport) RdmaFixture.INSTANCE.open();
    }

    @AfterEach
    void close() throws IOException {
        b.close();
        a.close();
        setHugePages(original);
    }

    private static boolean setHugePages(String count) {
        try {
            Files.writeString(NR_HUGEPAGES, count);
            return Files.readString(NR_HUGEPAGES).trim().equals(count);
        } catch (IOException e) {
            return false;
        }
    }

    /** Writes a region's worth of bytes from a plain region of {@code a} into {@code target} and checks them. */
    private void writeThrough(LocalRegion target) {
        try (LocalRegion source = a.allocate(target.length(), RemoteAccess.NONE)) {
            for (long i = 0; i < target.length() / 8; i++) {
                source.segment().set(ValueLayout.JAVA_LONG, 8 * i, i * 0x9E3779B97F4A7C15L);
            }
            Link link = a.connect(b.address());
            link.awaitCompletion(link.write(source, 0, target.remote(), 0, target.length()));
            assertEquals(-1, target.segment().mismatch(source.segment()));
        }
    }

    @Test
    void largeRegionsUseFreeHugePagesAndFallBackToPlainPages() {
        assumeTrue(setHugePages("4"), "cannot reserve 4 hugepages (not root, or no contiguous memory)");
        try (LocalRegion huge = b.allocate(MIB2, RemoteAccess.WRITE);
             LocalRegion small = b.allocate(64 * 1024, RemoteAccess.WRITE)) {
            assertTrue(b.isHugePageBacked(huge), "2 MiB region with free hugepages");
            assertFalse(b.isHugePageBacked(small), "regions under 2 MiB use plain pages");
            assertEquals(0, huge.segment().address() % MIB2, "hugepage-aligned");
            assertEquals(MIB2, huge.length());
            writeThrough(huge);
        }
        try (SlabPool pool = new SlabPool(b, RemoteAccess.WRITE)) {
            LocalRegion slab = pool.slab(1);
            assertTrue(b.isHugePageBacked(slab), "a default slab is one hugepage");
            LocalRegion odd = b.allocate(MIB2 + 4096, RemoteAccess.WRITE); // two pages, length as asked
            assertTrue(b.isHugePageBacked(odd));
            assertEquals(MIB2 + 4096, odd.remote().length());
            writeThrough(odd);
            odd.close();
            assertFalse(b.isHugePageBacked(odd), "forgotten once unmapped");
        }

        assertTrue(setHugePages("0"), "cannot release the hugepages");
        try (LocalRegion plain = b.allocate(MIB2, RemoteAccess.WRITE)) {
            assertFalse(b.isHugePageBacked(plain), "no free hugepages: plain pages");
            writeThrough(plain);
        }
    }
}
