package io.fabricrpc.transport.rdma.nativelib;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.ibm.disni.util.NativeAffinity;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaEventChannel;
import com.ibm.disni.verbs.RdmaProvider;
import com.ibm.disni.verbs.RdmaVerbs;
import com.ibm.disni.verbs.impl.NatIbvRecvWR;
import com.ibm.disni.verbs.impl.NatIbvSendWR;
import com.ibm.disni.verbs.impl.NatIbvSge;
import com.ibm.disni.verbs.impl.NativeDispatcher;
import com.ibm.disni.verbs.impl.SockAddrIn;
import java.io.IOException;
import java.lang.foreign.SymbolLookup;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledIf;

/** Runs everywhere (no RDMA device needed): loading, the JNI table and the layout handshake. */
class DisniNativeLibraryTest {

    @BeforeAll
    static void load() {
        DisniNativeLibrary.load();
    }

    @Test
    void loadIsIdempotentAndDeletesTheExtractedFile() {
        String first = DisniNativeLibrary.load();
        assertEquals(first, DisniNativeLibrary.load());
        assertTrue(first.endsWith("libdisni.so"), first);
        assertTrue(!new java.io.File(first).exists(), "extracted copy should be unlinked after loading: " + first);
    }

    @Test
    void everyNativeMethodOfDisniHasAnExportedSymbol() {
        List<String> missing = new ArrayList<>();
        int count = 0;
        for (Class<?> type : List.of(NativeDispatcher.class, NativeAffinity.class)) {
            for (Method m : type.getDeclaredMethods()) {
                if (!Modifier.isNative(m.getModifiers())) {
                    continue;
                }
                count++;
                String symbol = "Java_" + type.getName().replace('.', '_') + "_" + m.getName().replace("_", "_1");
                if (SymbolLookup.loaderLookup().find(symbol).isEmpty()) {
                    missing.add(symbol);
                }
            }
        }
        assertEquals(50, count, "DiSNI 2.1 declares 48 + 2 native methods");
        assertEquals(List.of(), missing);
    }

    @Test
    void handshakeAdoptsTheRdmaCoreLayouts() throws IOException {
        assertEquals(32, RdmaProvider.provider().getVersion());
        assertEquals(32, RdmaVerbs.getVersion());
        assertEquals(16, SockAddrIn.CSIZE);
        assertEquals(128, NatIbvSendWR.CSIZE);
        assertEquals(32, NatIbvRecvWR.CSIZE);
        assertEquals(16, NatIbvSge.CSIZE);
        assertEquals(48, IbvWC.CSIZE);
        assertEquals(40, NatIbvSendWR.REMOTEADDR_OFFSET);
        assertEquals(48, NatIbvSendWR.RKEY_OFFSET);
    }

    @Test
    void affinityOfTheCallingThreadIsReadable() {
        assertNotEquals(0L, NativeAffinity.getAffinity());
    }

    @Test
    @DisabledIf("io.fabricrpc.transport.rdma.nativelib.DisniNativeLibrary#hasRdmaDevice")
    void withoutADeviceTheErrorsSayWhatToDo() {
        IOException e = assertThrows(IOException.class, RdmaEventChannel::createEventChannel);
        assertTrue(e.getMessage().contains("rdma_create_event_channel") && e.getMessage().contains("Soft-RoCE"),
                e.getMessage());
        NativeLibraryException none = assertThrows(NativeLibraryException.class, DisniNativeLibrary::requireRdmaDevice);
        assertTrue(none.getMessage().contains("rdma link add"), none.getMessage());
    }
}
