package io.fabricrpc.fuzz;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What every fuzz target of a decoder checks: an input either decodes or fails with one of the decoder's documented
 * exceptions; anything else (another RuntimeException, an Error) is a finding and is rethrown as an AssertionError
 * that names the input's length and the offending throwable. Each target's time bound per input is its
 * {@code @Timeout}, which Jazzer also passes to libFuzzer as {@code -timeout} when fuzzing.
 */
public final class FuzzSupport {
    /**
     * Per-input bound, in seconds, on every target (regression mode: JUnit's timeout; fuzzing: libFuzzer's). Inputs
     * decode in well under a second; a 5 s bound reported a pause of a loaded 2-core machine as a hang.
     */
    public static final int TIMEOUT_SECONDS = 10;
    /**
     * Bound of a fuzzing run ({@code JAZZER_FUZZ=1}); scripts/fuzz.sh ends it earlier by an execution count. Jazzer
     * appends it after the libFuzzer arguments given as system properties, so it cannot be lowered from there.
     */
    public static final String MAX_DURATION = "1h";

    private FuzzSupport() {
    }

    /** Fails unless {@code thrown} is an instance of one of {@code documented}. */
    public static void expectDocumented(Throwable thrown, List<Class<? extends Throwable>> documented, int inputLength) {
        for (Class<? extends Throwable> type : documented) {
            if (type.isInstance(thrown)) {
                return;
            }
        }
        throw new AssertionError("input of " + inputLength + " bytes: undocumented " + thrown.getClass().getName()
                + " (documented: " + documented.stream().map(Class::getSimpleName).toList() + "): " + thrown, thrown);
    }

    /** A native copy of {@code bytes} (decoders read plain native segments, as the transports hand out). */
    public static MemorySegment nativeCopy(Arena arena, byte[] bytes, long size) {
        MemorySegment segment = arena.allocate(Math.max(size, bytes.length), 8);
        MemorySegment.copy(MemorySegment.ofArray(bytes), 0, segment, 0, bytes.length);
        return segment;
    }

    /**
     * System property naming the test resources root to (re)write the seed corpora into; each target's
     * {@code writeSeeds} test runs only when it is set (scripts/fuzz.sh --write-seeds).
     */
    public static final String WRITE_SEEDS = "fuzz.writeSeeds";

    /** The resources root given by {@link #WRITE_SEEDS}. */
    public static Path seedDirectory() {
        return Path.of(System.getProperty(WRITE_SEEDS));
    }

    /** Writes one seed file {@code dir/name}. */
    public static void writeSeed(Path dir, String name, byte[] bytes) {
        try {
            Files.createDirectories(dir);
            Files.write(dir.resolve(name), bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
