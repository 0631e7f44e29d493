package io.fabricrpc.serialization;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import io.fabricrpc.fabric.LocalLauncher;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingStream;
import org.junit.jupiter.api.Test;

/**
 * The generated invoker passes every capture in order, however many groups its reads are cut into, and both JIT
 * tiers compile the invoker of a large function (a C1 bailout left it interpreted in some runs).
 */
class CaptureCodeTest {
    private static final Class<?>[] TYPES = {long.class, int.class, Object.class, double.class, byte.class,
            boolean.class, char.class, short.class, float.class};

    static Object collect(Object[] arguments) {
        return arguments;
    }

    /** An implementation taking {@code captures} (objects as Object) and {@code arguments} Objects, returning them. */
    private static MethodHandle collector(Class<?>[] captures, int arguments) throws ReflectiveOperationException {
        Class<?>[] parameters = new Class<?>[captures.length + arguments];
        for (int i = 0; i < parameters.length; i++) {
            parameters[i] = i < captures.length && captures[i].isPrimitive() ? captures[i] : Object.class;
        }
        return MethodHandles.lookup().findStatic(CaptureCodeTest.class, "collect",
                        MethodType.methodType(Object.class, Object[].class))
                .asCollector(Object[].class, parameters.length)
                .asType(MethodType.methodType(Object.class, parameters));
    }

    private static Object valueOf(Class<?> type, int i) {
        if (type == long.class) {
            return 1_000_000_007L * i;
        } else if (type == int.class) {
            return -i;
        } else if (type == double.class) {
            return i + 0.25;
        } else if (type == byte.class) {
            return (byte) i;
        } else if (type == boolean.class) {
            return i % 3 == 0;
        } else if (type == char.class) {
            return (char) ('a' + i);
        } else if (type == short.class) {
            return (short) (-300 * i);
        } else if (type == float.class) {
            return i * 1.5f;
        }
        return "object " + i;
    }

    private static void put(MemorySegment segment, long at, Object value) {
        switch (value) {
            case Long v -> segment.set(ValueLayout.JAVA_LONG_UNALIGNED, at, v);
            case Integer v -> segment.set(ValueLayout.JAVA_INT_UNALIGNED, at, v);
            case Double v -> segment.set(ValueLayout.JAVA_DOUBLE_UNALIGNED, at, v);
            case Byte v -> segment.set(ValueLayout.JAVA_BYTE, at, v);
            case Boolean v -> segment.set(ValueLayout.JAVA_BYTE, at, (byte) (v ? 1 : 0));
            case Character v -> segment.set(ValueLayout.JAVA_CHAR_UNALIGNED, at, v);
            case Short v -> segment.set(ValueLayout.JAVA_SHORT_UNALIGNED, at, v);
            case Float v -> segment.set(ValueLayout.JAVA_FLOAT_UNALIGNED, at, v);
            default -> throw new IllegalArgumentException(String.valueOf(value));
        }
    }

    @Test
    void everyCaptureArrivesInOrderForEveryNumberOfGroups() throws Throwable {
        MemorySegment segment = Arena.ofAuto().allocate(4096);
        long base = 24;
        for (int n : new int[] {0, 1, 15, 16, 17, 32, 33, 40, 100}) {
            for (int arguments = 0; arguments <= 1; arguments++) {
                Class<?>[] captures = new Class<?>[n];
                for (int i = 0; i < n; i++) {
                    captures[i] = TYPES[(i * 7 + n) % TYPES.length];
                }
                long[] offsets = CallRecordDescriptor.primitiveOffsets(captures);
                List<Object> expected = new ArrayList<>();
                List<Object> objects = new ArrayList<>();
                int[] objectIndex = new int[n];
                for (int i = 0; i < n; i++) {
                    Object value = valueOf(captures[i], i);
                    expected.add(value);
                    if (captures[i].isPrimitive()) {
                        put(segment, base + offsets[i], value);
                    } else {
                        objectIndex[i] = objects.size();
                        objects.add(value);
                    }
                }
                Object argument = "argument";
                if (arguments == 1) {
                    expected.add(argument);
                }
                CaptureCode.Invoker invoker = CaptureCode.invoker(collector(captures, arguments), captures, offsets,
                        objectIndex, arguments);
                Object[] got = (Object[]) invoker.invoke(segment, base, objects.toArray(), argument);
                assertEquals(expected, Arrays.asList(got), n + " captures, " + arguments + " argument(s)");
            }
        }
    }

    static long sum;

    static Object sum32(long a0, long a1, long a2, long a3, long a4, long a5, long a6, long a7, long b0, long b1,
                        long b2, long b3, long b4, long b5, long b6, long b7, long c0, long c1, long c2, long c3,
                        long c4, long c5, long c6, long c7, long d0, long d1, long d2, long d3, long d4, long d5,
                        long d6, long d7) {
        sum += a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + b0 + b1 + b2 + b3 + b4 + b5 + b6 + b7
                + c0 + c1 + c2 + c3 + c4 + c5 + c6 + c7 + d0 + d1 + d2 + d3 + d4 + d5 + d6 + d7;
        return null;
    }

    /**
     * The invoker of 32 long captures (a 256 B call) compiles at C1's profiling tier and at C2, and no compilation of
     * it fails: read whole in one method, C1 ran out of virtual registers on it. In a child JVM whose C1 does not
     * wait for C2's queue, so that the invoker's first compilation is at tier 3 (as in a busy receiver).
     */
    @Test
    void theInvokerOfThirtyTwoLongsCompilesAtBothTiers() {
        try (LocalLauncher child = LocalLauncher.builder(CompileProbe.class).processes(1)
                .jvmArgs("-Xbatch", "-XX:Tier3DelayOn=100000", "-Xmx64m").start()) {
            child.awaitAll(Duration.ofSeconds(60)); // throws, with the child's last lines, on a failure or a timeout
            String output = String.join("\n", child.process(0).output());
            assertTrue(output.contains("compiled at C1 and C2"), output);
        }
    }

    /** Runs a 32-long invoker until JFR has seen it compiled at a C1 tier and at C2; exits 1 on a failed one. */
    static final class CompileProbe {
        public static void main(String[] args) throws Throwable {
            Class<?>[] captures = new Class<?>[32];
            Arrays.fill(captures, long.class);
            MethodHandle impl = MethodHandles.lookup().findStatic(CaptureCodeTest.class, "sum32",
                    MethodType.methodType(Object.class, captures));
            long[] offsets = CallRecordDescriptor.primitiveOffsets(captures);
            CaptureCode.Invoker invoker = CaptureCode.invoker(impl, captures, offsets, new int[32], 0);
            MemorySegment segment = Arena.ofAuto().allocate(512);
            for (int i = 0; i < 32; i++) {
                segment.set(ValueLayout.JAVA_LONG_UNALIGNED, offsets[i], i);
            }
            Queue<RecordedEvent> compilations = new ConcurrentLinkedQueue<>();
            try (RecordingStream stream = new RecordingStream()) {
                stream.enable("jdk.Compilation").withThreshold(Duration.ZERO);
                stream.onEvent("jdk.Compilation", event -> {
                    if (event.getValue("method.type.name").toString().contains("GeneratedInvoker")) {
                        compilations.add(event);
                    }
                });
                stream.startAsync();
                boolean c1 = false;
                boolean c2 = false;
                long deadline = System.nanoTime() + 40_000_000_000L;
                Object[] none = new Object[0];
                while (!(c1 && c2)) {
                    if (System.nanoTime() - deadline > 0) {
                        System.out.println("within 40 s, compiled at C1: " + c1 + ", at C2: " + c2 + "; "
                                + compilations.stream().map(CompileProbe::describe).toList());
                        System.exit(1);
                    }
                    for (int i = 0; i < 10_000; i++) {
                        invoker.invoke(segment, 0, none, null);
                    }
                    for (RecordedEvent event : compilations) {
                        if (!event.getBoolean("succeded")) {
                            System.out.println("a compilation of the invoker failed: " + describe(event));
                            System.exit(1);
                        }
                        int level = event.getInt("compileLevel");
                        c1 |= level >= 1 && level <= 3;
                        c2 |= level == 4;
                    }
                    Thread.sleep(10);
                }
            }
            System.out.println("compiled at C1 and C2: " + compilations.size() + " compilations, sum " + sum);
        }

        /** One line (the launcher's report keeps a child's last lines): method, tier, id, outcome. */
        private static String describe(RecordedEvent event) {
            return event.getValue("method.name") + " at tier " + event.getInt("compileLevel") + " (compile "
                    + event.getLong("compileId") + ", " + (event.getBoolean("succeded") ? "succeeded" : "failed") + ")";
        }
    }
}
