package io.fabricrpc.benchmarks;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Optional;

/**
 * Pins the calling thread to one CPU with Linux {@code sched_setaffinity(0, ...)} (pid 0 is the calling thread).
 * On a loaded two-CPU machine the scheduler otherwise tends to put two ping-pong threads on the same CPU, where
 * every round trip costs context switches and the benchmark measures the scheduler, not the protocol.
 */
public final class CpuAffinity {
    private static final int MASK_BYTES = 128; // cpu_set_t: 1024 CPUs
    private static final StructLayout CAPTURED = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CAPTURED.varHandle(java.lang.foreign.MemoryLayout.PathElement.groupElement("errno"));
    private static final MethodHandle SET_AFFINITY = lookup();

    private CpuAffinity() {
    }

    private static MethodHandle lookup() {
        Linker linker = Linker.nativeLinker();
        Optional<MemorySegment> symbol = linker.defaultLookup().find("sched_setaffinity");
        return symbol.map(s -> linker.downcallHandle(s, FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                ValueLayout.JAVA_LONG, ValueLayout.ADDRESS), Linker.Option.captureCallState("errno"))).orElse(null);
    }

    /**
     * Pins the calling thread to {@code cpu}.
     *
     * @throws IllegalStateException if the system has no sched_setaffinity or refuses (the message has errno)
     */
    public static void pinCurrentThread(int cpu) {
        if (cpu < 0 || cpu >= MASK_BYTES * 8) {
            throw new IllegalArgumentException("cpu must be in [0, " + MASK_BYTES * 8 + "), got " + cpu);
        }
        if (SET_AFFINITY == null) {
            throw new IllegalStateException("sched_setaffinity is not available on " + System.getProperty("os.name")
                    + "; run with --pin none");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment mask = arena.allocate(MASK_BYTES, 8);
            mask.set(ValueLayout.JAVA_BYTE, cpu / 8, (byte) (1 << (cpu % 8)));
            MemorySegment state = arena.allocate(CAPTURED);
            int result = (int) SET_AFFINITY.invokeExact(state, 0, (long) MASK_BYTES, mask);
            if (result != 0) {
                throw new IllegalStateException("sched_setaffinity to CPU " + cpu + " failed with errno "
                        + (int) ERRNO.get(state, 0L) + " (is the CPU online and allowed for this process? see --pin)");
            }
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("sched_setaffinity to CPU " + cpu + " failed: " + e, e);
        }
    }

    /**
     * Parses a {@code --pin} option: {@code "A,B"} (two CPU numbers), {@code "none"}, or {@code "auto"} (0,1 when the
     * JVM sees two CPUs or more). Returns the pair, or null for no pinning.
     *
     * @throws IllegalArgumentException naming the option and the value when it is none of these
     */
    public static int[] parsePair(String option, String roles, String value) {
        String pins = value.trim().toLowerCase(java.util.Locale.ROOT);
        if (pins.equals("auto")) {
            pins = Runtime.getRuntime().availableProcessors() >= 2 ? "0,1" : "none";
        }
        if (pins.equals("none")) {
            return null;
        }
        String[] cpus = pins.split(",");
        try {
            if (cpus.length == 2) {
                int[] pair = {Integer.parseInt(cpus[0].trim()), Integer.parseInt(cpus[1].trim())};
                if (pair[0] >= 0 && pair[1] >= 0) {
                    return pair;
                }
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new IllegalArgumentException(option + " must be " + roles + " (two CPU numbers), none or auto, got '"
                + value + "'");
    }
}
