package io.fabricrpc.serialization;

import io.fabricrpc.api.SerializationRegistry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabricrpc.api.RemoteRunnable;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * A call taken apart when it is made ({@link CapturedCall}) encodes to the same record as the function itself, for
 * every capture type, size and number of lambda classes; the generated sender lookup and capture writers are what
 * the compiler directives fabricrpc installs at join force-inline.
 */
class CapturedCallTest {
    private static final String DIRECTIVES = "/io/fabricrpc/invocation/jit-directives.json";
    private static final SerializationRegistry REGISTRY =
            CallCodecTest.baseBuilder().allowCapturingClass(CapturedCallTest.class).build();

    private final MemorySegment viaCall = Arena.ofAuto().allocate(4096);
    private final MemorySegment viaFunction = Arena.ofAuto().allocate(4096);

    static long sink;

    /**
     * Encodes {@code function} twice (definition, then id only) both ways, on fresh links: both records are equal,
     * and each, decoded and invoked, does what running the function here does.
     */
    private static void assertSameRecords(RemoteRunnable function, CapturedCall call, MemorySegment a,
                                          MemorySegment b) {
        CallEncoder byCall = new CallEncoder(REGISTRY, "call");
        CallEncoder byFunction = new CallEncoder(REGISTRY, "function");
        CallDecoder decoder = new CallDecoder(REGISTRY, "call");
        long before = sink;
        function.run();
        long effect = sink - before;
        for (int round = 0; round < 2; round++) {
            call.capture(function);
            int length = byCall.encode(call, a, 0, a.byteSize());
            assertEquals(length, byFunction.encode(function, b, 0, b.byteSize()), "round " + round);
            assertEquals(-1, a.asSlice(0, length).mismatch(b.asSlice(0, length)), "round " + round);
            before = sink;
            assertEquals(length, decoder.invoke(a, 0, length, null));
            assertEquals(effect, sink - before, "round " + round);
        }
    }

    @Test
    void capturedCallsEncodeAsTheFunctionDoesForEveryPrimitiveType() {
        CapturedCall call = new CapturedCall();
        boolean z = true;
        byte b = -2;
        char c = 'x';
        short s = -300;
        int i = 1 << 20;
        float f = 1.5f;
        long l = -1L << 40;
        double d = Math.PI;
        assertSameRecords((RemoteRunnable) () -> sink += (z ? 1 : 0) + b + c + s + i + (long) f + l + (long) d,
                call, viaCall, viaFunction);
        assertSameRecords((RemoteRunnable) () -> sink += i, call, viaCall, viaFunction);
        assertSameRecords((RemoteRunnable) () -> sink++, call, viaCall, viaFunction);
    }

    /**
     * A repeat call of the last primitives-only function a link encoded has a known length, and writing it in place
     * gives the same record as encoding it; a first call, another function or object captures have none.
     */
    @Test
    void knownLengthAndWriteKnownMatchEncode() {
        CapturedCall call = new CapturedCall();
        CallEncoder encoder = new CallEncoder(REGISTRY, "known");
        long a = 5;
        int b = 6;
        RemoteRunnable primitives = () -> sink += a + b;
        call.capture(primitives);
        assertEquals(-1, encoder.knownLength(call), "first call: the definition goes with it");
        encoder.encode(call, viaCall, 0, viaCall.byteSize());
        assertEquals(-1, encoder.knownLength(call), "the prefix is taken from the first call without a definition");
        int length = encoder.encode(call, viaCall, 0, viaCall.byteSize());
        assertEquals(length, encoder.knownLength(call));
        viaFunction.fill((byte) 0x5A);
        encoder.writeKnown(call, viaFunction, 0);
        assertEquals(-1, viaCall.asSlice(0, length).mismatch(viaFunction.asSlice(0, length)));
        assertEquals((byte) 0x5A, viaFunction.get(java.lang.foreign.ValueLayout.JAVA_BYTE, length), "wrote past the record");

        RemoteRunnable other = () -> sink += a * b;
        call.capture(other);
        assertEquals(-1, encoder.knownLength(call), "another function");
        String label = "x";
        call.capture((RemoteRunnable) () -> sink += label.length() + a);
        assertEquals(-1, encoder.knownLength(call), "object captures");
        call.clear();
        assertEquals(-1, encoder.knownLength(call), "a cleared call");
    }

    @Test
    void aCallWithMoreCaptureBytesThanTheInitialAreaGrowsIt() {
        CapturedCall call = new CapturedCall();
        long a0 = 1, a1 = 2, a2 = 3, a3 = 4, a4 = 5, a5 = 6, a6 = 7, a7 = 8, a8 = 9, a9 = 10;
        long b0 = 11, b1 = 12, b2 = 13, b3 = 14, b4 = 15, b5 = 16, b6 = 17, b7 = 18, b8 = 19, b9 = 20;
        long c0 = 21, c1 = 22, c2 = 23, c3 = 24, c4 = 25, c5 = 26, c6 = 27, c7 = 28, c8 = 29, c9 = 30;
        long d0 = 31, d1 = 32, d2 = 33, d3 = 34, d4 = 35, d5 = 36, d6 = 37, d7 = 38, d8 = 39, d9 = 40;
        RemoteRunnable forty = () -> sink += a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9
                + b0 + b1 + b2 + b3 + b4 + b5 + b6 + b7 + b8 + b9 + c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7 + c8 + c9
                + d0 + d1 + d2 + d3 + d4 + d5 + d6 + d7 + d8 + d9;
        assertEquals(320, SenderFunction.of(forty).primitiveBytes());
        assertSameRecords(forty, call, viaCall, viaFunction);
        // Back to a small function on the grown area.
        int x = 7;
        assertSameRecords((RemoteRunnable) () -> sink += x, call, viaCall, viaFunction);
    }

    @Test
    void objectCapturesKeepTheFunctionAndClearDropsIt() {
        CapturedCall call = new CapturedCall();
        String label = "abc";
        long n = 5;
        RemoteRunnable withObject = () -> sink += label.length() + n;
        assertSameRecords(withObject, call, viaCall, viaFunction);
        assertSame(withObject, call.function, "a function with object captures is kept for Kryo");
        call.clear();
        assertNull(call.function);
        assertNull(call.sender);

        RemoteRunnable primitives = () -> sink += n;
        call.capture(primitives);
        assertNull(call.function, "a primitives-only function is not kept: the call holds its captures alone");
    }

    @Test
    void encodingAClearedCallIsRefused() {
        CapturedCall call = new CapturedCall();
        CallEncoder encoder = new CallEncoder(REGISTRY, "A->B");
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> encoder.encode(call, viaCall, 0, viaCall.byteSize()));
        assertTrue(e.getMessage().contains("A->B"), e.getMessage());
    }

    @Test
    void notALambdaIsRefusedWhenCapturedAndNothingIsKept() {
        CapturedCall call = new CapturedCall();
        RemoteRunnable notALambda = new RemoteRunnable() {
            @Override
            public void run() {
            }
        };
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> call.capture(notALambda));
        assertTrue(e.getMessage().contains("not a lambda"), e.getMessage());
        assertNull(call.sender);
    }

    /** More hot lambda classes than the generated lookup holds: the later ones go through the ClassValue, unchanged. */
    @Test
    void lambdaClassesBeyondTheGeneratedLookupEncodeTheSame() {
        List<RemoteRunnable> functions = new ArrayList<>();
        for (int k = 0; k < SenderFunction.MAX_DISPATCHED + 4; k++) {
            functions.add(distinctLambda(k));
        }
        CapturedCall call = new CapturedCall();
        for (RemoteRunnable function : functions) {
            for (int i = 0; i <= SenderFunction.DISPATCH_AFTER; i++) {
                assertSame(SenderFunction.of(function), SenderFunction.of(function)); // hot: joins while there is room
            }
            assertSameRecords(function, call, viaCall, viaFunction);
        }
        assertEquals(functions.size(), functions.stream().map(Object::getClass).distinct().count());
        assertTrue(SenderFunction.isDispatchFull(), "20 hot classes fill the lookup");
        for (RemoteRunnable function : functions) {
            assertSameRecords(function, call, viaCall, viaFunction); // through the lookup or the ClassValue alike
        }
    }

    /** A class used a few times (at start-up, say) takes no room in the lookup; a hot one joins while there is room. */
    @Test
    void onlyHotClassesJoinTheGeneratedLookup() {
        long v = 11;
        RemoteRunnable cold = () -> sink += v * 2;
        RemoteRunnable hot = () -> sink += v * 3;
        SenderFunction.of(cold);
        assertTrue(!SenderFunction.isDispatched(cold.getClass()), "a class called once joined the lookup");
        boolean roomBefore = !SenderFunction.isDispatchFull();
        for (int i = 0; i <= SenderFunction.DISPATCH_AFTER; i++) {
            SenderFunction.of(hot);
        }
        assertEquals(roomBefore, SenderFunction.isDispatched(hot.getClass()),
                "a hot class joins the lookup iff it had room (room before: " + roomBefore + ")");
        assertTrue(!SenderFunction.isDispatched(cold.getClass()));
    }

    /**
     * Threads taking calls apart while the generated lookup is being extended (a new class relinks the call site) all
     * get their own class's sender view and captures: a racing thread may run an older lookup, which misses to the
     * ClassValue, never to another class's sender.
     */
    @Test
    void threadsCapturingManyClassesWhileTheLookupGrowsGetTheirOwnSenders() throws Exception {
        int classes = SenderFunction.MAX_DISPATCHED + 4;
        int threads = 4;
        java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(threads);
        java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int offset = t * 5;
            Thread worker = new Thread(() -> {
                CapturedCall call = new CapturedCall();
                try {
                    start.await();
                    for (int round = 0; round < 20 * SenderFunction.DISPATCH_AFTER; round++) {
                        int k = (round + offset) % classes;
                        RemoteRunnable function = distinctLambda(k);
                        call.capture(function);
                        if (call.sender.index() != SenderFunction.of(function).index()
                                || (long) CaptureAccessors.LONGS.get(call.captures, 0) != k) {
                            throw new AssertionError("lambda " + k + " got sender " + call.sender.index()
                                    + " and capture " + (long) CaptureAccessors.LONGS.get(call.captures, 0));
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            });
            workers.add(worker);
            worker.start();
        }
        for (Thread worker : workers) {
            worker.join(60_000);
            assertTrue(!worker.isAlive(), "worker still running after 60 s");
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
    }

    /** The generated classes carry the names fabricrpc's wildcard inline directives (jit-directives.json) name. */
    @Test
    void generatedClassesAreTheOnesTheInlineDirectivesName() {
        List<String> directives = inlineDirectives().stream()
                .filter(a -> a.endsWith("*.*"))
                .map(a -> a.substring(1, a.length() - "*.*".length()).replace('/', '.'))
                .toList();
        long v = 3;
        RemoteRunnable function = () -> sink += v;
        String writer = SenderFunction.of(function).primitiveWriter().getClass().getName();
        assertTrue(directives.stream().anyMatch(writer::startsWith), writer + " is not force-inlined by " + directives);
        String lookup = CaptureCode.generatedName(SenderFunction.class).displayName();
        lookup = CaptureCode.class.getPackageName() + "." + lookup;
        assertTrue(directives.stream().anyMatch(lookup::startsWith), lookup + " is not force-inlined by " + directives);
        assertEquals(2, directives.size(), "one directive per generated sender class: " + directives);
    }

    /** The inline patterns of the compiler directives fabricrpc installs at join (JitDirectives). */
    private static List<String> inlineDirectives() {
        try (var in = CapturedCallTest.class.getResourceAsStream(DIRECTIVES)) {
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).lines().map(String::strip)
                    .filter(l -> l.startsWith("\"+")).map(l -> l.substring(1, l.indexOf('"', 1))).toList();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static RemoteRunnable distinctLambda(int k) {
        long x = k;
        return switch (k) {
            case 0 -> () -> sink += x;
            case 1 -> () -> sink += x + 1;
            case 2 -> () -> sink += x + 2;
            case 3 -> () -> sink += x + 3;
            case 4 -> () -> sink += x + 4;
            case 5 -> () -> sink += x + 5;
            case 6 -> () -> sink += x + 6;
            case 7 -> () -> sink += x + 7;
            case 8 -> () -> sink += x + 8;
            case 9 -> () -> sink += x + 9;
            case 10 -> () -> sink += x + 10;
            case 11 -> () -> sink += x + 11;
            case 12 -> () -> sink += x + 12;
            case 13 -> () -> sink += x + 13;
            case 14 -> () -> sink += x + 14;
            case 15 -> () -> sink += x + 15;
            case 16 -> () -> sink += x + 16;
            case 17 -> () -> sink += x + 17;
            case 18 -> () -> sink += x + 18;
            case 19 -> () -> sink += x + 19;
            default -> throw new IllegalArgumentException("no lambda " + k);
        };
    }
}
