package io.fabricrpc.counters;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.fabricrpc.fuzz.ClassVersionShim;
import io.fabricrpc.fuzz.FuzzSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Fuzzes {@link CountersFileReader#read} with the bytes of a counters file another process wrote (or is writing).
 * Documented outcome: never an exception; a {@link CountersFileReader.Snapshot} or a
 * {@link CountersFileReader.Failure} whose message is one non-blank line. Complements CountersFileTest's seeded random
 * loop with coverage-guided inputs.
 */
@ExtendWith(ClassVersionShim.class)
class CountersFileReaderFuzzTest {
    private static final Path FILE;

    static {
        try {
            Path shm = Path.of("/dev/shm"); // memory-backed where there is one: each input is a file write and read
            Path dir = Files.isDirectory(shm) && Files.isWritable(shm) ? Files.createTempDirectory(shm, "counters-fuzz")
                    : Files.createTempDirectory("counters-fuzz");
            dir.toFile().deleteOnExit();
            FILE = dir.resolve("fuzz.counters");
            FILE.toFile().deleteOnExit(); // before the directory: deleted in reverse order
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @FuzzTest(maxDuration = FuzzSupport.MAX_DURATION)
    @Timeout(FuzzSupport.TIMEOUT_SECONDS)
    void files(byte[] input) throws IOException {
        Files.write(FILE, input);
        CountersFileReader.Result result;
        try {
            result = CountersFileReader.read(FILE);
        } catch (Throwable e) {
            throw new AssertionError("read threw on " + input.length + " bytes (it never throws): " + e, e);
        }
        if (result instanceof CountersFileReader.Failure f && (f.message().isBlank() || f.message().contains("\n"))) {
            throw new AssertionError("failure message not one line: '" + f.message() + "'");
        }
        if (result == null) {
            throw new AssertionError("null result for " + input.length + " bytes");
        }
    }

    /** A file as a publisher writes it, with three counters. */
    @Test
    @EnabledIfSystemProperty(named = FuzzSupport.WRITE_SEEDS, matches = ".+")
    void writeSeeds() throws IOException {
        Path dir = FuzzSupport.seedDirectory().resolve("io/fabricrpc/counters/CountersFileReaderFuzzTestInputs/files");
        Path temp = Files.createTempDirectory("counters-seed");
        CountersConfig config = CountersConfig.from(Map.of(CountersConfig.DIRECTORY, temp.resolve("c").toString(),
                CountersConfig.MAX_COUNTERS, "16"));
        try (CountersFile file = CountersFile.create(config, 3, "127.0.0.1:7000")) {
            CountersPublisher publisher = new CountersPublisher(file, 1);
            publisher.register(new CountersFileTest.Fixed(1, 2, 3));
            publisher.publishNow();
            FuzzSupport.writeSeed(dir, "three-counters", Files.readAllBytes(file.path()));
        }
    }
}
