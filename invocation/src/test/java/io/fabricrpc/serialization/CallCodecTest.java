package io.fabricrpc.serialization;

import io.fabricrpc.api.SerializationRegistry;
import io.fabricrpc.api.RemoteInvocationException;
import io.fabricrpc.api.ResultTooLargeException;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabricrpc.api.RemoteBufferConsumer;
import io.fabricrpc.api.RemoteContextConsumer;
import io.fabricrpc.api.RemoteRunnable;
import io.fabricrpc.api.RemoteSupplier;

import java.io.Serializable;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandleInfo;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class CallCodecTest {
    /** A registered record captured by value. */
    record Point(int x, long y, String label) {
    }

    /** A registered POJO (Kryo field serializer). */
    public static final class Counter {
        public int count;
        public String name;

        public Counter() {
        }

        Counter(int count, String name) {
            this.count = count;
            this.name = name;
        }

        /** Target of a bound method reference: runs on the receiver's copy. */
        public void increment() {
            count++;
            seen(this.count, this.name);
        }

        public int doubled() {
            return count * 2;
        }
    }

    /** Registered, but holds an unregistered class. */
    public static final class Holder {
        public Object inner;
    }

    /** Never registered. */
    public static final class Secret {
        public int value = 7;
    }

    /** Lambdas capturing {@code this}: allowed through its package, registered so that it can be captured. */
    public static final class Worker {
        public int base;

        public Worker() {
        }

        Worker(int base) {
            this.base = base;
        }

        RemoteSupplier<Integer> plus(int x) {
            return () -> base + x;
        }

        RemoteRunnable callingPrivate() {
            return () -> privateHelper();
        }

        private void privateHelper() {
            seen("private", base);
        }
    }

    static final SerializationRegistry REGISTRY = baseBuilder().allowCapturingClass(CallCodecTest.class).build();

    static SerializationRegistry.Builder baseBuilder() {
        return SerializationRegistry.builder()
                .register(int[].class)
                .register(String[].class)
                .register(Point.class)
                .register(Counter.class)
                .register(Holder.class)
                .register(ArrayList.class);
    }

    /** Receiver-side state reached from invoked lambdas. */
    static volatile Object[] lastSeen;
    static long sink;
    static int staticCalls;

    static void seen(Object... values) {
        lastSeen = values;
    }

    static void staticTarget() {
        staticCalls++;
    }

    /** Same shape as a lambda body but not a lambda: a forged definition naming it must be refused. */
    @SuppressWarnings("unused")
    private static void lambda$forged$0() {
        staticCalls += 1000;
    }

    private final MemorySegment segment = Arena.ofAuto().allocate(64 * 1024);
    private CallEncoder encoder;
    private CallDecoder decoder;

    @BeforeEach
    void setUp() {
        encoder = new CallEncoder(REGISTRY, "A->B");
        decoder = new CallDecoder(REGISTRY, "A->B");
        lastSeen = null;
        staticCalls = 0;
    }

    private int encode(Serializable function) {
        int length = encoder.encode(function, segment, 0, segment.byteSize());
        assertTrue(length > 0, "encoded length " + length);
        return length;
    }

    /** Encodes, decodes, invokes; checks the decoder consumed exactly the record; returns the result. */
    private Object roundTrip(Serializable function, Object argument) {
        int length = encode(function);
        assertEquals(length, CallRecordDescriptor.recordEnd(segment, 0, segment.byteSize()));
        assertEquals(length, decoder.invoke(segment, 0, segment.byteSize(), argument));
        return decoder.lastResult();
    }

    /** Twice: the first call carries the definition, the second only the id. */
    private Object[] twice(RemoteRunnable function) {
        roundTrip(function, null);
        Object[] first = lastSeen;
        lastSeen = null;
        roundTrip(function, null);
        assertArrayEquals(first, lastSeen);
        return lastSeen;
    }

    // ---------------------------------------------------------------- primitive captures

    @Test
    void runnableWithoutCaptures() {
        RemoteRunnable r = () -> staticCalls++;
        roundTrip(r, null);
        roundTrip(r, null);
        assertEquals(2, staticCalls);
    }

    @Test
    void oneToSixIntCaptures() {
        int a = 1;
        int b = -2;
        int c = Integer.MAX_VALUE;
        int d = Integer.MIN_VALUE;
        int e = 5;
        int f = 6;
        assertArrayEquals(new Object[] {a}, twice(() -> seen(a)));
        assertArrayEquals(new Object[] {a, b}, twice(() -> seen(a, b)));
        assertArrayEquals(new Object[] {a, b, c}, twice(() -> seen(a, b, c)));
        assertArrayEquals(new Object[] {a, b, c, d}, twice(() -> seen(a, b, c, d)));
        assertArrayEquals(new Object[] {a, b, c, d, e}, twice(() -> seen(a, b, c, d, e)));
        assertArrayEquals(new Object[] {a, b, c, d, e, f}, twice(() -> seen(a, b, c, d, e, f)));
        assertEquals(6, encoder.functionCount());
    }

    @Test
    void sixCapturesOfEachPrimitiveType() {
        boolean z1 = true;
        boolean z2 = false;
        assertArrayEquals(new Object[] {z1, z2, z1, z2, z2, z1}, twice(() -> seen(z1, z2, z1, z2, z2, z1)));
        byte b1 = Byte.MIN_VALUE;
        byte b2 = Byte.MAX_VALUE;
        byte b3 = -1;
        assertArrayEquals(new Object[] {b1, b2, b3, b1, b2, b3}, twice(() -> seen(b1, b2, b3, b1, b2, b3)));
        char c1 = 'x';
        char c2 = '\uffff';
        char c3 = '\u00e9';
        assertArrayEquals(new Object[] {c1, c2, c3, c3, c2, c1}, twice(() -> seen(c1, c2, c3, c3, c2, c1)));
        short s1 = Short.MIN_VALUE;
        short s2 = Short.MAX_VALUE;
        short s3 = -300;
        assertArrayEquals(new Object[] {s1, s2, s3, s1, s2, s3}, twice(() -> seen(s1, s2, s3, s1, s2, s3)));
        long l1 = Long.MIN_VALUE;
        long l2 = Long.MAX_VALUE;
        long l3 = 0x0102030405060708L;
        assertArrayEquals(new Object[] {l1, l2, l3, l3, l2, l1}, twice(() -> seen(l1, l2, l3, l3, l2, l1)));
        float f1 = Float.NaN;
        float f2 = -0.0f;
        float f3 = Float.MIN_VALUE;
        assertArrayEquals(new Object[] {f1, f2, f3, Float.POSITIVE_INFINITY, f2, f1},
                twice(() -> seen(f1, f2, f3, Float.POSITIVE_INFINITY, f2, f1)));
        double d1 = Double.NaN;
        double d2 = -0.0;
        double d3 = Math.PI;
        assertArrayEquals(new Object[] {d1, d2, d3, d1, d2, d3}, twice(() -> seen(d1, d2, d3, d1, d2, d3)));
    }

    @Test
    void aRecordWithObjectCapturesLeavesZeroedMemoryBeyondItZero() {
        // Object captures get a 2-byte body length that shrinks to 1 for a short body: the body moves back one byte,
        // and its old last byte must not stay past the record (a receiver reads the next header there).
        for (int size = 0; size < 40; size++) {
            int[] ints = new int[size];
            java.util.Arrays.fill(ints, -1);
            long sequence = size;
            RemoteRunnable call = () -> seen(sequence, ints);
            for (int repeat = 0; repeat < 2; repeat++) { // with its definition, then by id
                segment.fill((byte) 0);
                int length = encode(call);
                for (long at = length; at < length + 64; at++) {
                    assertEquals(0, segment.get(ValueLayout.JAVA_BYTE, at), "byte " + at + " past a record of "
                            + length + " bytes (" + size + " ints, repeat " + repeat + ")");
                }
                assertEquals(length, decoder.invoke(segment, 0, segment.byteSize(), null));
                assertArrayEquals(ints, (int[]) lastSeen[1]);
            }
        }
    }

    @Test
    void mixedPrimitiveAndObjectCaptures() {
        byte b = 3;
        String s = "héllo";
        long l = -77L;
        Point p = new Point(1, 2L, "p");
        char c = 'q';
        int[] ints = {1, 2, 3};
        double d = 2.5;
        Object[] result = twice(() -> seen(b, s, l, p, c, ints, d));
        assertEquals(b, result[0]);
        assertEquals(s, result[1]);
        assertEquals(l, result[2]);
        assertEquals(p, result[3]);
        assertEquals(c, result[4]);
        assertArrayEquals(ints, (int[]) result[5]);
        assertEquals(d, result[6]);
    }

    // ---------------------------------------------------------------- object captures

    @Test
    void objectCaptures() {
        String nothing = null;
        String[] strings = {"a", null, "c"};
        Counter counter = new Counter(4, "ctr");
        ArrayList<String> list = new ArrayList<>(List.of("x", "y"));
        Object boxed = 42;
        Object[] result = twice(() -> seen(nothing, strings, counter.count, counter.name, list, boxed));
        assertNull(result[0]);
        assertArrayEquals(strings, (String[]) result[1]);
        assertEquals(4, result[2]);
        assertEquals("ctr", result[3]);
        assertEquals(list, result[4]);
        assertEquals(42, result[5]);
    }

    @Test
    void largeObjectCaptureMovesTheBodyForALongerLengthField() {
        String big = "z".repeat(20_000);
        int tail = 9;
        Object[] result = twice(() -> seen(big, tail));
        assertEquals(big, result[0]);
        assertEquals(tail, result[1]);
    }

    // ---------------------------------------------------------------- other shapes

    @Test
    void supplierResultsRoundTripThroughTheResultCodec() {
        ResultCodec callee = new ResultCodec(REGISTRY);
        ResultCodec caller = new ResultCodec(REGISTRY);
        MemorySegment reply = Arena.ofAuto().allocate(256);
        int x = 20;
        long y = 22;
        List<RemoteSupplier<?>> suppliers = List.of(
                () -> x + (int) y,
                () -> y * 2,
                () -> x > 3,
                () -> "s" + x,
                () -> new Point(x, y, "r"),
                () -> null,
                () -> new int[] {x, x});
        List<Object> expected = new ArrayList<>(List.of(42, 44L, true, "s20", new Point(20, 22L, "r")));
        expected.add(null);
        for (int i = 0; i < suppliers.size(); i++) {
            Object value = roundTrip(suppliers.get(i), null);
            int length = callee.encodeValue(value, reply, 0, reply.byteSize());
            assertEquals(length, CallRecordDescriptor.resultRecordEnd(reply, 0, reply.byteSize()));
            Object decoded = caller.decode(reply, 0, reply.byteSize());
            if (i < expected.size()) {
                assertEquals(expected.get(i), decoded);
            } else {
                assertArrayEquals(new int[] {20, 20}, (int[]) decoded);
            }
        }
    }

    @Test
    void resultFailureAndRefusals() {
        ResultCodec codec = new ResultCodec(REGISTRY);
        MemorySegment reply = Arena.ofAuto().allocate(64);
        int length = codec.encodeFailure(new IllegalStateException("é".repeat(100)), reply, 0, reply.byteSize());
        assertTrue(length > 0 && length <= 64);
        RemoteInvocationException e = assertThrows(RemoteInvocationException.class,
                () -> codec.decode(reply, 0, reply.byteSize()));
        assertEquals(IllegalStateException.class.getName(), e.remoteClassName());
        assertTrue(e.remoteMessage().startsWith("éé"));
        UnregisteredClassException u = assertThrows(UnregisteredClassException.class,
                () -> codec.encodeValue(new Secret(), reply, 0, reply.byteSize()));
        assertTrue(u.getMessage().contains(Secret.class.getName()), u.getMessage());
        assertEquals(ResultCodec.DOES_NOT_FIT, codec.encodeValue("x".repeat(100), reply, 0, reply.byteSize()));
        MemorySegment large = Arena.ofAuto().allocate(4096);
        int failure = codec.encodeFailure(new ResultTooLargeException("it needs 9 bytes"), large, 0, large.byteSize());
        ResultTooLargeException tooLarge = assertThrows(ResultTooLargeException.class,
                () -> codec.decode(large, 0, failure));
        assertEquals("it needs 9 bytes", tooLarge.getMessage(), "not 'remote function threw'");
    }

    @Test
    void bufferConsumerGetsTheReceivedBuffer() {
        MemorySegment received = Arena.ofAuto().allocate(16);
        received.set(ValueLayout.JAVA_LONG, 8, 1234L);
        long add = 1;
        RemoteBufferConsumer consumer = buffer -> seen(buffer.get(ValueLayout.JAVA_LONG, 8) + add, buffer.byteSize());
        roundTrip(consumer, received);
        assertArrayEquals(new Object[] {1235L, 16L}, lastSeen);
    }

    @Test
    void contextConsumerGetsTheDecodersContext() {
        StringBuilder threadState = new StringBuilder("ctx");
        CallDecoder withContext = new CallDecoder(REGISTRY, "A->B", threadState);
        int k = 3;
        RemoteContextConsumer<StringBuilder> append = context -> context.append(k);
        for (int i = 0; i < 2; i++) {
            int n = encode(append);
            withContext.invoke(segment, 0, n, "ignored argument");
        }
        assertEquals("ctx33", threadState.toString());
        RemoteContextConsumer<StringBuilder> ref = StringBuilder::reverse;
        withContext.invoke(segment, 0, encode(ref), null);
        assertEquals("33xtc", threadState.toString());
        assertNull(withContext.lastResult(), "only suppliers have results");
    }

    @Test
    void methodReferences() {
        RemoteRunnable staticRef = CallCodecTest::staticTarget;
        roundTrip(staticRef, null);
        roundTrip(staticRef, null);
        assertEquals(2, staticCalls);

        Counter counter = new Counter(10, "bound");
        RemoteRunnable boundRef = counter::increment;
        roundTrip(boundRef, null);
        assertArrayEquals(new Object[] {11, "bound"}, lastSeen);
        assertEquals(10, counter.count, "the receiver works on its own copy");

        String text = "four";
        RemoteSupplier<Integer> length = text::length;
        assertEquals(4, roundTrip(length, null));
        RemoteSupplier<Integer> doubled = counter::doubled;
        assertEquals(20, roundTrip(doubled, null));
        assertEquals(20, roundTrip(doubled, null));
        RemoteSupplier<Counter> constructor = Counter::new;
        assertEquals(0, ((Counter) roundTrip(constructor, null)).count);
    }

    @Test
    void lambdasCapturingThisOfAClassAllowedByPackage() {
        SerializationRegistry byPackage = baseBuilder().register(Worker.class)
                .allowCapturingPackage(CallCodecTest.class.getPackageName()).build();
        CallEncoder sender = new CallEncoder(byPackage, "pkg");
        CallDecoder receiver = new CallDecoder(byPackage, "pkg");
        Worker worker = new Worker(40);
        for (int i = 0; i < 2; i++) {
            int n = sender.encode(worker.plus(2), segment, 0, segment.byteSize());
            receiver.invoke(segment, 0, n, null);
            assertEquals(42, receiver.lastResult());
            n = sender.encode(worker.callingPrivate(), segment, 0, segment.byteSize());
            receiver.invoke(segment, 0, n, null);
            assertArrayEquals(new Object[] {"private", 40}, lastSeen);
        }
        // The package rule is exact: the same records are refused by a registry allowing another package.
        CallDecoder other = new CallDecoder(baseBuilder().register(Worker.class).allowCapturingPackage("io.fabricrpc")
                .build(), "other");
        CallEncoder fresh = new CallEncoder(byPackage, "other");
        int n = fresh.encode(worker.plus(1), segment, 0, segment.byteSize());
        assertThrows(FunctionNotAllowedException.class, () -> other.invoke(segment, 0, n, null));
    }

    @Test
    void placeholdersAreParsedWithoutLoadingClasses() throws Exception {
        Object[] values = FunctionLinker.placeholders("(IJ[ILno/such/Type;[[Lx/Y;DZ)V");
        assertArrayEquals(new Object[] {0, 0L, null, null, null, 0d, false}, values);
        assertThrows(FunctionLinker.Refused.class, () -> FunctionLinker.placeholders("(Lunterminated)V"));
        assertThrows(FunctionLinker.Refused.class, () -> FunctionLinker.placeholders("(Q)V"));
    }

    // ---------------------------------------------------------------- ids and definitions

    @Test
    void definitionIsSentOnlyOncePerLink() {
        int v = 5;
        RemoteRunnable r = () -> seen(v);
        int first = encode(r);
        assertEquals(CallRecordDescriptor.DEFINITION_FLAG, segment.get(ValueLayout.JAVA_BYTE, 0) & 1);
        assertTrue(first > 100, "definition carries names: " + first);
        decoder.invoke(segment, 0, first, null);
        for (int i = 0; i < 3; i++) {
            int next = encode(r);
            assertEquals(0, segment.get(ValueLayout.JAVA_BYTE, 0), "tag: id 0, no definition");
            assertEquals(4 + CallRecordDescriptor.STEADY_STATE_OVERHEAD_BYTES, next);
            decoder.invoke(segment, 0, next, null);
        }
        assertEquals(1, encoder.functionCount());
        assertArrayEquals(new Object[] {5}, lastSeen);
    }

    @Test
    void twoLinksHaveIndependentIdSpaces() {
        RemoteRunnable f = () -> seen("f");
        RemoteRunnable g = () -> seen("g");
        CallEncoder other = new CallEncoder(REGISTRY, "A->C");
        CallDecoder otherDecoder = new CallDecoder(REGISTRY, "A->C");
        encoder.encode(f, segment, 0, 1024);
        decoder.invoke(segment, 0, 1024, null);
        encoder.encode(g, segment, 0, 1024);
        decoder.invoke(segment, 0, 1024, null);
        other.encode(g, segment, 0, 1024);
        otherDecoder.invoke(segment, 0, 1024, null);

        int length = encoder.encode(g, segment, 0, 1024);
        assertEquals(1 << CallRecordDescriptor.FUNCTION_ID_SHIFT, segment.get(ValueLayout.JAVA_BYTE, 0));
        decoder.invoke(segment, 0, length, null);
        assertArrayEquals(new Object[] {"g"}, lastSeen);
        length = other.encode(g, segment, 0, 1024);
        assertEquals(0, segment.get(ValueLayout.JAVA_BYTE, 0), "g is function 0 on the other link");
        otherDecoder.invoke(segment, 0, length, null);
        assertArrayEquals(new Object[] {"g"}, lastSeen);
    }

    @Test
    void steadyStateOverheadIsTwoBytes() {
        int a = 1;
        long b = 2;
        RemoteRunnable primitives = () -> sink += a + b;
        encode(primitives);
        int steady = encode(primitives);
        assertEquals(Integer.BYTES + Long.BYTES + 2, steady);
        assertTrue(steady - Integer.BYTES - Long.BYTES <= 8);

        String s = "abc";
        RemoteRunnable object = () -> seen(s);
        encode(object);
        int withObject = encode(object);
        // Kryo writes "abc" as 3 bytes (ASCII, last byte flagged) after a 1-byte class id.
        assertEquals(2 + 1 + 3, withObject);
    }

    @Test
    void repeatCallsTakeTheCachedPrefixAndMatchTheGeneralEncoding() {
        // `encoder` repeats one function, so from its third call on it writes the cached prefix; `general` alternates
        // two functions, so each of its calls takes the general path. Both give f id 0: records must be equal.
        CallEncoder general = new CallEncoder(REGISTRY, "A->B general");
        MemorySegment generalOut = Arena.ofAuto().allocate(1024);
        RemoteRunnable g = () -> seen("g");
        for (int i = 0; i < 6; i++) {
            long v = 1_000_003L * i;
            int w = -i;
            RemoteRunnable f = () -> seen(v, w);
            int at = 1 + i; // unaligned offsets
            int length = encoder.encode(f, segment, at, 1024);
            int expected = general.encode(f, generalOut, at, 1024);
            general.encode(g, generalOut, 512, 1024);
            assertEquals(expected, length, "record length of call " + i);
            assertEquals(-1L, segment.asSlice(at, length).mismatch(generalOut.asSlice(at, expected)),
                    "record bytes of call " + i);
            assertEquals(at + length, decoder.invoke(segment, at, at + length, null), "decoder stops at the record end");
            assertArrayEquals(new Object[] {v, w}, lastSeen);
        }
        long v = 7;
        int w = 8;
        RemoteRunnable f = () -> seen(v, w);
        encoder.encode(f, segment, 0, 1024); // a new lambda class: its definition
        encoder.encode(f, segment, 0, 1024); // the general path caches its prefix
        int steady = encoder.encode(f, segment, 0, 1024);
        assertEquals(2 + Long.BYTES + Integer.BYTES, steady);
        segment.fill((byte) 0x11);
        assertEquals(CallEncoder.DOES_NOT_FIT, encoder.encode(f, segment, 100, 100 + steady - 1));
        assertEquals((byte) 0x11, segment.get(ValueLayout.JAVA_BYTE, 100 + steady - 1),
                "nothing written at or past the limit");
        encoder.reset();
        encoder.encode(f, segment, 0, 1024);
        assertEquals(CallRecordDescriptor.DEFINITION_FLAG, segment.get(ValueLayout.JAVA_BYTE, 0) & 1,
                "after reset the next call carries the definition again");
    }

    @Test
    void decoderTakesRepeatCallsByTheirPrefixButNeverConfusesFunctionsOrSkipsChecks() {
        long v = 11;
        int w = 12;
        RemoteRunnable f = () -> seen(v, w);
        RemoteRunnable h = () -> seen("h", v, w); // the same capture types: records of the same length
        for (int i = 0; i < 3; i++) {
            roundTrip(f, null);
            assertArrayEquals(new Object[] {v, w}, lastSeen);
        }
        int length = encode(f);
        CallDecodingException truncated = assertThrows(CallDecodingException.class,
                () -> decoder.invoke(segment, 0, length - 1, null));
        assertTrue(truncated.getMessage().contains("truncated"), truncated.getMessage());
        for (int i = 0; i < 3; i++) {
            roundTrip(h, null);
            assertArrayEquals(new Object[] {"h", v, w}, lastSeen);
            roundTrip(f, null);
            assertArrayEquals(new Object[] {v, w}, lastSeen);
        }
        // A record claiming the cached function's id with a definition again goes the general way (redefinition).
        decoder.reset();
        encoder.reset();
        roundTrip(h, null); // h now has id 0, f's old id
        roundTrip(h, null);
        assertArrayEquals(new Object[] {"h", v, w}, lastSeen);
    }

    // ---------------------------------------------------------------- sender-side refusals

    @Test
    void unregisteredCaptureIsRefusedBeforeAnythingIsWritten() {
        Secret secret = new Secret();
        RemoteRunnable r = () -> seen(secret.value);
        segment.fill((byte) 0x5A);
        UnregisteredClassException e = assertThrows(UnregisteredClassException.class, () -> encode(r));
        assertEquals(Secret.class.getName(), e.className());
        assertTrue(e.getMessage().contains(Secret.class.getName()), e.getMessage());
        for (long i = 0; i < 256; i++) {
            assertEquals((byte) 0x5A, segment.get(ValueLayout.JAVA_BYTE, i), "byte " + i + " written");
        }
        assertEquals(0, encoder.functionCount());
    }

    @Test
    void capturingThisOfAnUnregisteredClassIsRefused() {
        RemoteRunnable r = () -> seen(this.encoder != null);
        UnregisteredClassException e = assertThrows(UnregisteredClassException.class, () -> encode(r));
        assertEquals(CallCodecTest.class.getName(), e.className());
    }

    @Test
    void unregisteredClassReachableFromACaptureIsRefused() {
        Holder holder = new Holder();
        holder.inner = new Secret();
        RemoteRunnable r = () -> seen(holder.inner);
        UnregisteredClassException e = assertThrows(UnregisteredClassException.class, () -> encode(r));
        assertEquals(Secret.class.getName(), e.className());
        assertEquals(0, encoder.functionCount(), "nothing committed");
        RemoteRunnable ok = () -> seen("ok");
        roundTrip(ok, null);
        assertArrayEquals(new Object[] {"ok"}, lastSeen);
    }

    @Test
    void cyclicObjectGraphFailsAtTheDepthLimit() {
        ArrayList<Object> cycle = new ArrayList<>();
        cycle.add(cycle);
        RemoteRunnable r = () -> seen(cycle.size());
        SerializationException e = assertThrows(SerializationException.class, () -> encode(r));
        assertTrue(e.getMessage().contains("depth"), e.getMessage());
        assertEquals(0, encoder.functionCount());
    }

    @Test
    void recordThatDoesNotFitIsNotCommitted() {
        int v = 3;
        RemoteRunnable r = () -> seen(v);
        segment.fill((byte) 0x11);
        assertEquals(CallEncoder.DOES_NOT_FIT, encoder.encode(r, segment, 0, 50));
        assertEquals(0, encoder.functionCount());
        String big = "b".repeat(500);
        RemoteRunnable large = () -> seen(big);
        encode(large);
        assertEquals(CallEncoder.DOES_NOT_FIT, encoder.encode(large, segment, 1000, 1200));
        assertEquals((byte) 0x11, segment.get(ValueLayout.JAVA_BYTE, 1200), "nothing written at or past the limit");
        int length = encode(r);
        assertEquals(1, segment.get(ValueLayout.JAVA_BYTE, 0) & 1, "definition still pending");
        decoder.invoke(segment, 0, length, null);
        assertArrayEquals(new Object[] {3}, lastSeen);
    }

    @Test
    void notALambdaIsRejected() {
        RemoteRunnable anonymous = new RemoteRunnable() {
            @Override
            public void run() {
            }
        };
        assertThrows(IllegalArgumentException.class, () -> encode(anonymous));
    }

    @Test
    void capturingClassNotAllowedAtTheSender() {
        CallEncoder strict = new CallEncoder(baseBuilder().build(), "strict");
        RemoteRunnable r = () -> staticCalls++;
        FunctionNotAllowedException e = assertThrows(FunctionNotAllowedException.class,
                () -> strict.encode(r, segment, 0, segment.byteSize()));
        assertEquals(CallCodecTest.class.getName(), e.capturingClass());
    }

    // ---------------------------------------------------------------- receiver-side refusals and errors

    @Test
    void capturingClassNotAllowedAtTheReceiver() {
        CallDecoder strict = new CallDecoder(baseBuilder().build(), "strict");
        RemoteRunnable r = () -> staticCalls++;
        int first = encode(r);
        FunctionNotAllowedException e = assertThrows(FunctionNotAllowedException.class,
                () -> strict.invoke(segment, 0, first, null));
        assertTrue(e.getMessage().contains(CallCodecTest.class.getName()), e.getMessage());
        assertEquals(first, e.recordEnd());
        int steady = encode(r);
        UnknownFunctionException u = assertThrows(UnknownFunctionException.class,
                () -> strict.invoke(segment, 0, steady, null));
        assertTrue(u.getMessage().contains("refused"), u.getMessage());
        assertEquals(0, staticCalls);
    }

    @Test
    void forgedDefinitionNamingANonLambdaMethodIsRefused() {
        FunctionDefinition forged = new FunctionDefinition(MethodHandleInfo.REF_invokeStatic,
                CallCodecTest.class.getName().replace('.', '/'), "io/fabricrpc/api/RemoteRunnable", "run", "()V",
                CallCodecTest.class.getName().replace('.', '/'), "lambda$forged$0", "()V", "()V", "()V");
        byte[] body = forged.toBytes();
        int n = writeRecord(0, true, body);
        FunctionNotAllowedException e = assertThrows(FunctionNotAllowedException.class,
                () -> decoder.invoke(segment, 0, n, null));
        assertTrue(e.getMessage().contains("does not match a serializable lambda"), e.getMessage());
        assertEquals(0, staticCalls);

        FunctionDefinition foreign = new FunctionDefinition(MethodHandleInfo.REF_invokeStatic,
                "java/lang/Runtime", "io/fabricrpc/api/RemoteRunnable", "run", "()V",
                "java/lang/System", "gc", "()V", "()V", "()V");
        int m = writeRecord(1, true, foreign.toBytes());
        e = assertThrows(FunctionNotAllowedException.class, () -> decoder.invoke(segment, 0, m, null));
        assertEquals("java.lang.Runtime", e.capturingClass());
    }

    @Test
    void unknownFunctionId() {
        int n = writeRecord(5, false, new byte[0]);
        UnknownFunctionException e = assertThrows(UnknownFunctionException.class,
                () -> decoder.invoke(segment, 0, n, null));
        assertEquals(5, e.functionId());
        assertTrue(e.getMessage().contains("A->B") && e.getMessage().contains("5"), e.getMessage());
        assertEquals(n, e.recordEnd());
    }

    @Test
    void truncatedAndCorruptedRecordsGiveClearErrorsAndTheDecoderKeepsWorking() {
        int a = 7;
        String s = "str";
        RemoteRunnable r = () -> seen(a, s);
        int first = encode(r);
        assertThrows(CallDecodingException.class, () -> decoder.invoke(segment, 0, first - 1, null));
        decoder.invoke(segment, 0, first, null);
        int steady = encode(r);

        // Truncated: the header says more bytes than the limit allows.
        CallDecodingException truncated = assertThrows(CallDecodingException.class,
                () -> decoder.invoke(segment, 0, steady - 1, null));
        assertTrue(truncated.getMessage().contains("link A->B: truncated"), truncated.getMessage());

        // Corrupt object capture: the Kryo class id of the String becomes an unregistered id.
        byte saved = segment.get(ValueLayout.JAVA_BYTE, 2 + 4);
        segment.set(ValueLayout.JAVA_BYTE, 2 + 4, (byte) 0x70);
        CallDecodingException badClass = assertThrows(CallDecodingException.class,
                () -> decoder.invoke(segment, 0, steady, null));
        assertEquals(steady, badClass.recordEnd());
        segment.set(ValueLayout.JAVA_BYTE, 2 + 4, saved);

        // Body length smaller than the primitive captures.
        segment.set(ValueLayout.JAVA_BYTE, 1, (byte) 2);
        CallDecodingException shortBody = assertThrows(CallDecodingException.class,
                () -> decoder.invoke(segment, 0, steady, null));
        assertTrue(shortBody.getMessage().contains("capture bytes"), shortBody.getMessage());

        // Malformed varint tag: no end to the header.
        for (int i = 0; i < 6; i++) {
            segment.set(ValueLayout.JAVA_BYTE, 100 + i, (byte) 0xFF);
        }
        CallDecodingException malformed = assertThrows(CallDecodingException.class,
                () -> decoder.invoke(segment, 100, 106, null));
        assertEquals(-1, malformed.recordEnd());

        lastSeen = null;
        encode(r);
        decoder.invoke(segment, 0, segment.byteSize(), null);
        assertArrayEquals(new Object[] {7, "str"}, lastSeen);
    }

    @Test
    void corruptArrayLengthDoesNotAllocateIt() {
        int[] ints = {1, 2};
        RemoteRunnable r = () -> seen(ints);
        roundTrip(r, null);
        int steady = encode(r);
        // Body: class id (1 byte), then the array length + 1 as a varint: claim 2^28 elements.
        long lengthAt = 2 + 1;
        CallRecordDescriptor.writeVarInt(segment, lengthAt, 1 << 28);
        segment.set(ValueLayout.JAVA_BYTE, 1, (byte) (1 + 5 + 2));
        CallDecodingException e = assertThrows(CallDecodingException.class,
                () -> decoder.invoke(segment, 0, segment.byteSize(), null));
        assertTrue(e.getMessage().contains("remain in the record"), e.getMessage());
    }

    @Test
    void corruptStringLengthDoesNotAllocateIt() {
        String text = "\u00e9t\u00e9"; // not ASCII: Kryo writes a char count, then UTF-8
        RemoteRunnable r = () -> seen(text);
        roundTrip(r, null);
        int steady = encode(r);
        // Body: String class id (1 byte), then the char count + 1 as a flagged varint; claim about 2^26 chars.
        segment.set(ValueLayout.JAVA_BYTE, 3, (byte) 0xFF);
        segment.set(ValueLayout.JAVA_BYTE, 4, (byte) 0xFF);
        segment.set(ValueLayout.JAVA_BYTE, 5, (byte) 0xFF);
        segment.set(ValueLayout.JAVA_BYTE, 6, (byte) 0x7F);
        CallDecodingException e = assertThrows(CallDecodingException.class,
                () -> decoder.invoke(segment, 0, steady, null));
        assertTrue(e.getMessage().contains("cannot fit"), e.getMessage());
    }

    @Test
    void corruptCollectionAndObjectArraySizesDoNotAllocateThem() {
        ArrayList<String> list = new ArrayList<>(List.of("a"));
        String[] array = {"b"};
        int claimed = (1 << 26) + 1; // size + 1, as Kryo writes it; fits 4 bytes in both varint forms
        // Kryo writes a collection's size + 1 as a varint whose first byte holds a flag (bit 7) and 6 value bits.
        byte[] flagged = {(byte) (0x80 | 0x40 | claimed & 0x3F), (byte) (claimed >>> 6 & 0x7F | 0x80),
            (byte) (claimed >>> 13 & 0x7F | 0x80), (byte) (claimed >>> 20 & 0x7F)};
        byte[] plain = {(byte) (claimed & 0x7F | 0x80), (byte) (claimed >>> 7 & 0x7F | 0x80),
            (byte) (claimed >>> 14 & 0x7F | 0x80), (byte) (claimed >>> 21 & 0x7F)};
        RemoteRunnable listCall = () -> seen(list);
        RemoteRunnable arrayCall = () -> seen((Object) array);
        List<RemoteRunnable> calls = List.of(listCall, arrayCall);
        List<byte[]> sizes = List.of(flagged, plain);
        for (int c = 0; c < calls.size(); c++) {
            roundTrip(calls.get(c), null);
            int steady = encode(calls.get(c));
            // Body: class id at 2, then the 1-byte size at 3: replace it with a 4-byte size.
            byte[] rest = segment.asSlice(4, steady - 4).toArray(ValueLayout.JAVA_BYTE);
            MemorySegment.copy(sizes.get(c), 0, segment, ValueLayout.JAVA_BYTE, 3, 4);
            MemorySegment.copy(rest, 0, segment, ValueLayout.JAVA_BYTE, 7, rest.length);
            segment.set(ValueLayout.JAVA_BYTE, 1, (byte) (steady - 2 + 3));
            CallDecodingException e = assertThrows(CallDecodingException.class,
                    () -> decoder.invoke(segment, 0, steady + 3, null));
            assertTrue(e.getMessage().contains("cannot fit"), e.getMessage());
        }
    }

    @Test
    void readerSkipsAFailedRecordAndServesTheNextOnes() {
        RemoteRunnable r = () -> staticCalls++;
        RemoteRunnable thrower = () -> {
            throw new IllegalStateException("boom");
        };
        long position = 0;
        position += encoder.encode(r, segment, position, segment.byteSize());
        position += writeRecordAt(position, 9, false, new byte[0]);
        position += encoder.encode(thrower, segment, position, segment.byteSize());
        position += encoder.encode(r, segment, position, segment.byteSize());
        long end = position;

        List<String> errors = new ArrayList<>();
        long at = 0;
        while (at < end) {
            try {
                at = decoder.invoke(segment, at, end, null);
            } catch (CallDecodingException e) {
                errors.add(e.getClass().getSimpleName());
                at = e.recordEnd();
            } catch (IllegalStateException e) {
                errors.add(e.getMessage());
                at = CallRecordDescriptor.recordEnd(segment, at, end);
            }
        }
        assertEquals(List.of("UnknownFunctionException", "boom"), errors);
        assertEquals(2, staticCalls);
    }

    @Test
    void checkedExceptionsFromTheFunctionAreWrapped() {
        RemoteRunnable sneaky = () -> CallCodecTest.<RuntimeException>sneakyThrow(new java.io.IOException("io"));
        int n = encode(sneaky);
        UndeclaredThrowableException e = assertThrows(UndeclaredThrowableException.class,
                () -> decoder.invoke(segment, 0, n, null));
        assertTrue(e.getCause() instanceof java.io.IOException);
    }

    @SuppressWarnings("unchecked")
    private static <T extends Throwable> void sneakyThrow(Throwable t) throws T {
        throw (T) t;
    }

    @Test
    void fingerprintDependsOnRegistrationOrder() {
        assertEquals(REGISTRY.fingerprint(), baseBuilder().allowCapturingClass(CallCodecTest.class).build()
                .fingerprint());
        SerializationRegistry swapped = SerializationRegistry.builder().register(String[].class)
                .register(int[].class).register(Point.class).register(Counter.class).register(Holder.class)
                .register(ArrayList.class).allowCapturingClass(CallCodecTest.class).build();
        assertNotEquals(REGISTRY.fingerprint(), swapped.fingerprint());
    }

    @Test
    void encodersAndDecodersOfDifferentThreadsShareOnlyImmutableState() throws Exception {
        int threads = 2;
        int calls = 2_000;
        java.util.concurrent.atomic.AtomicLong total = new java.util.concurrent.atomic.AtomicLong();
        java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
        for (int t = 0; t < threads; t++) {
            int seed = t;
            Thread worker = new Thread(() -> {
                CallEncoder sender = new CallEncoder(REGISTRY, "T" + seed);
                CallDecoder receiver = new CallDecoder(REGISTRY, "T" + seed, total);
                MemorySegment chunk = Arena.ofAuto().allocate(1024);
                try {
                    start.await();
                    for (int i = 0; i < calls; i++) {
                        long v = i;
                        String s = (i & 1) == 0 ? "e" : "o";
                        RemoteContextConsumer<java.util.concurrent.atomic.AtomicLong> add =
                                counter -> counter.addAndGet(v + s.length());
                        int n = sender.encode(add, chunk, 0, chunk.byteSize());
                        receiver.invoke(chunk, 0, n, null);
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            });
            worker.start();
            workers.add(worker);
        }
        start.countDown();
        for (Thread worker : workers) {
            worker.join(30_000);
        }
        assertEquals(List.of(), failures);
        long perThread = (long) calls * (calls - 1) / 2 + calls;
        assertEquals(threads * perThread, total.get());
    }

    // ---------------------------------------------------------------- allocation

    /**
     * After warm-up, encode + decode + invoke of a primitive-capturing lambda allocates nothing. Runtime-internal
     * caches (class-value and method-handle customization) occasionally allocate about 1 KB once, so the test
     * requires one window of zero bytes and less than one byte per call on average overall.
     */
    @Test
    void steadyStateCallsWithPrimitiveCapturesAllocateNothing() {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        int a = 1;
        long b = 2;
        double c = 3.0;
        char d = 'd';
        RemoteRunnable r = () -> sink += a + b + (long) c + d;
        MemorySegment chunk = Arena.ofAuto().allocate(4096);
        long limit = chunk.byteSize();
        callMany(r, chunk, limit, 30_000);
        int windows = 3;
        int callsPerWindow = 40_000;
        long total = 0;
        long smallest = Long.MAX_VALUE;
        for (int w = 0; w < windows; w++) {
            long before = threads.getCurrentThreadAllocatedBytes();
            callMany(r, chunk, limit, callsPerWindow);
            long allocated = threads.getCurrentThreadAllocatedBytes() - before;
            total += allocated;
            smallest = Math.min(smallest, allocated);
        }
        System.out.println("steady-state allocation: " + total + " bytes in " + windows * callsPerWindow
                + " calls, smallest window " + smallest);
        assertEquals(0, smallest, "bytes allocated in the quietest window of " + callsPerWindow + " calls");
        assertTrue(total < (long) windows * callsPerWindow, "allocated " + total + " bytes");
    }

    private void callMany(RemoteRunnable r, MemorySegment chunk, long limit, int calls) {
        for (int i = 0; i < calls; i++) {
            int length = encoder.encode(r, chunk, 0, limit);
            decoder.invoke(chunk, 0, length, null);
        }
    }

    // ---------------------------------------------------------------- helpers

    private int writeRecord(int id, boolean definition, byte[] body) {
        return writeRecordAt(0, id, definition, body);
    }

    private int writeRecordAt(long at, int id, boolean definition, byte[] body) {
        int tag = id << CallRecordDescriptor.FUNCTION_ID_SHIFT | (definition ? 1 : 0);
        long p = at + CallRecordDescriptor.writeVarInt(segment, at, tag);
        p += CallRecordDescriptor.writeVarInt(segment, p, body.length);
        MemorySegment.copy(body, 0, segment, ValueLayout.JAVA_BYTE, p, body.length);
        return (int) (p + body.length - at);
    }
}
