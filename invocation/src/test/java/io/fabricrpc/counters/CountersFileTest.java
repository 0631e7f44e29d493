package io.fabricrpc.counters;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CountersFileTest {
    @TempDir
    Path temp;

    /** A source whose counts the test sets (the "owner" is the test thread; the publisher runs on it too). */
    static final class Fixed implements CounterSource {
        final long[] values;
        boolean closed;

        Fixed(long... values) {
            this.values = values;
        }

        @Override
        public int counterCount() {
            return values.length;
        }

        @Override
        public String label(int index) {
            return "fixed " + index;
        }

        @Override
        public int typeId(int index) {
            return CounterTypes.CALLS_SENT;
        }

        @Override
        public long loValue(int index) {
            return values[index];
        }

        @Override
        public boolean isClosed() {
            return closed;
        }
    }

    private CountersConfig config() {
        return CountersConfig.from(Map.of(CountersConfig.DIRECTORY, temp.resolve("user").resolve("counters").toString(),
                CountersConfig.MAX_COUNTERS, "64"));
    }

    private CountersFile create() throws IOException {
        return CountersFile.create(config(), 3, "127.0.0.1:7000");
    }

    @Test
    void headerAndCountersRoundTripAndCloseDeletesTheFile() throws IOException {
        CountersFile file = create();
        Path path = file.path();
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(path)));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(path.getParent())));
        CountersPublisher publisher = new CountersPublisher(file, 1);
        Fixed source = new Fixed(7, 11);
        publisher.register(source);
        publisher.publishNow();
        source.values[0] = 9;
        source.values[1] = 5; // a count that seems to go down is not shown (a racy reading)
        publisher.publishNow();

        CountersFileReader.Snapshot s = assertInstanceOf(CountersFileReader.Snapshot.class, CountersFileReader.read(path));
        assertEquals(ProcessHandle.current().pid(), s.pid());
        assertEquals(3, s.rank());
        assertEquals("127.0.0.1:7000", s.jobId());
        assertEquals(CountersFile.processStartMillis(ProcessHandle.current()), s.startMillis());
        assertTrue(s.alive());
        assertEquals(List.of("counters dropped (file full: raise fabric.counters.max)", "fixed 0", "fixed 1"),
                s.counters().stream().map(CountersFileReader.Counter::label).toList());
        assertEquals(List.of(0L, 9L, 11L), s.counters().stream().map(CountersFileReader.Counter::value).toList());

        source.closed = true;
        publisher.publishNow();
        CountersFileReader.Snapshot after = assertInstanceOf(CountersFileReader.Snapshot.class, CountersFileReader.read(path));
        assertEquals(1, after.counters().size(), "a closed source's counters are freed");

        file.close();
        assertFalse(Files.exists(path));
    }

    @Test
    void aFullFileCountsDroppedCountersInsteadOfFailing() throws IOException {
        try (CountersFile file = create()) {
            CountersPublisher publisher = new CountersPublisher(file, 1);
            publisher.register(new Fixed(new long[60]));
            publisher.register(new Fixed(new long[10])); // 1 + 60 + 10 > 64
            publisher.publishNow();
            CountersFileReader.Snapshot s = (CountersFileReader.Snapshot) CountersFileReader.read(file.path());
            assertEquals(61, s.counters().size());
            assertEquals(10, s.counters().get(0).value());
        }
    }

    @Test
    void aFileOfAGoneProcessIsMarkedAndRemovedByTheNextProcess() throws IOException {
        Path path;
        try (CountersFile file = create()) {
            path = file.path();
            byte[] bytes = Files.readAllBytes(path);
            ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder()).putLong(CountersFileDescriptor.PID_OFFSET, Integer.MAX_VALUE - 1L);
            Files.write(temp.resolve("gone.counters"), bytes);
        }
        Path stale = Files.move(temp.resolve("gone.counters"), path.getParent().resolve("999-1-r0.counters"));
        CountersFileReader.Snapshot s = (CountersFileReader.Snapshot) CountersFileReader.read(stale);
        assertFalse(s.alive());
        assertTrue(CountersStat.table(stale.getParent(), List.of(s)).contains("GONE"));
        try (CountersFile next = create()) {
            assertFalse(Files.exists(stale), "removed when the next counters file is created");
        }
    }

    private Path validFile() throws IOException {
        Path copy = temp.resolve("valid.bin");
        try (CountersFile file = create()) {
            CountersPublisher publisher = new CountersPublisher(file, 1);
            publisher.register(new Fixed(1, 2, 3));
            publisher.publishNow();
            Files.copy(file.path(), copy);
        }
        return copy;
    }

    private String failure(byte[] bytes) throws IOException {
        Path bad = temp.resolve("bad.counters");
        Files.write(bad, bytes);
        CountersFileReader.Failure f = assertInstanceOf(CountersFileReader.Failure.class, CountersFileReader.read(bad));
        assertEquals(bad, f.path());
        return f.message();
    }

    private static byte[] with(byte[] valid, int offset, int value) {
        byte[] copy = valid.clone();
        ByteBuffer.wrap(copy).order(ByteOrder.nativeOrder()).putInt(offset, value);
        return copy;
    }

    @Test
    void theReaderNamesWhatIsWrongWithABadFile() throws IOException {
        byte[] valid = Files.readAllBytes(validFile());
        assertEquals("truncated: 100 bytes, shorter than the 128-byte header", failure(Arrays.copyOf(valid, 100)));
        assertEquals("truncated: 4000 bytes, its header says " + valid.length, failure(Arrays.copyOf(valid, 4000)));
        byte[] magic = valid.clone();
        magic[0] = 'X';
        assertTrue(failure(magic).startsWith("bad magic 0x"), failure(magic));
        assertTrue(failure(new byte[valid.length]).startsWith("incomplete: magic not written yet"));
        assertEquals("layout version 2, this reader reads version 1",
                failure(with(valid, CountersFileDescriptor.VERSION_OFFSET, 2)));
        assertEquals("bad values length 100", failure(with(valid, CountersFileDescriptor.VALUES_LENGTH_OFFSET, 100)));
        assertTrue(failure(with(valid, CountersFileDescriptor.METADATA_LENGTH_OFFSET, 7)).startsWith("bad metadata length 7"));
        assertEquals("bad job id length 1000", failure(with(valid, CountersFileDescriptor.JOB_ID_LENGTH_OFFSET, 1000)));
        int record = CountersFileDescriptor.HEADER_LENGTH + org.agrona.concurrent.status.CountersReader.metaDataOffset(1);
        assertEquals("bad counter 1: record state 5", failure(with(valid, record, 5)));
        assertEquals("bad counter 1: label length -3", failure(with(valid,
                record + org.agrona.concurrent.status.CountersReader.LABEL_OFFSET, -3)));
        Files.createDirectory(temp.resolve("dir.counters"));
        assertEquals("not a regular file",
                ((CountersFileReader.Failure) CountersFileReader.read(temp.resolve("dir.counters"))).message());
    }

    @Test
    void randomBytesAndRandomTruncationsNeverThrow() throws IOException {
        byte[] valid = Files.readAllBytes(validFile());
        Random random = new Random(42);
        Path file = temp.resolve("fuzz.counters");
        for (int i = 0; i < 400; i++) {
            byte[] bytes;
            switch (i % 4) {
                case 0 -> { // random bytes, sometimes behind a valid magic and version
                    bytes = new byte[random.nextInt(valid.length + 256)];
                    random.nextBytes(bytes);
                    if (bytes.length >= 16 && random.nextBoolean()) {
                        System.arraycopy(valid, 0, bytes, 0, 12);
                    }
                }
                case 1 -> bytes = Arrays.copyOf(valid, random.nextInt(valid.length)); // truncated
                case 2 -> { // a valid file with a few random bytes changed, mostly in the header and metadata
                    bytes = valid.clone();
                    for (int k = 0; k < 1 + random.nextInt(8); k++) {
                        bytes[random.nextInt(random.nextBoolean() ? 2048 : bytes.length)] = (byte) random.nextInt();
                    }
                }
                default -> { // a valid file with one header word random
                    bytes = with(valid, 8 + 4 * random.nextInt(10), random.nextInt());
                }
            }
            Files.write(file, bytes);
            CountersFileReader.Result result = CountersFileReader.read(file); // never throws
            if (result instanceof CountersFileReader.Failure f) {
                assertFalse(f.message().isBlank() || f.message().contains("\n"), f.message());
                assertFalse(f.message().startsWith("cannot be read"), "unexpected exception: " + f.message());
            }
        }
    }

    @Test
    void totalsSumEachTypeAndKeepTheCountsOfClosedSources() throws IOException {
        CountersFile file = create();
        CountersPublisher publisher = new CountersPublisher(file, 1);
        Fixed first = new Fixed(7, 11);
        Fixed second = new Fixed(5);
        publisher.register(first);
        publisher.register(second);
        publisher.publishNow();
        assertEquals(23, publisher.totals().total(CounterTypes.CALLS_SENT));
        first.closed = true;
        publisher.publishNow(); // frees first's counters in the file
        first.values[0] = 100; // a closed owner is no longer read
        second.values[0] = 6;
        publisher.publishNow();
        assertEquals(24, publisher.totals().total(CounterTypes.CALLS_SENT), "a closed source's count stays");
        assertEquals(0, publisher.totals().total(CounterTypes.CALLS_RUN));
        publisher.close();
        assertFalse(Files.exists(file.path()));
    }
}
