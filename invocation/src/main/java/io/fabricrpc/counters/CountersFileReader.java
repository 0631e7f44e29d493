package io.fabricrpc.counters;

import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Reads counters files as hostile input: each file is copied (never mapped: a file truncated under a mapping would
 * crash the reader) and every length and state is checked before use. A bad file yields a {@link Failure} naming the
 * file and the bad value; no input makes it throw, allocate more than the format's bound, or block (only regular
 * files are opened, without following links).
 */
public final class CountersFileReader {
    /** The outcome for one file. */
    public sealed interface Result permits Snapshot, Failure {
        Path path();
    }

    /** One counter as read. */
    public record Counter(int id, int typeId, String label, long value) {
    }

    /** A valid file: its header and counters; {@code alive} is false when its process is gone. */
    public record Snapshot(Path path, long pid, int rank, String jobId, long startMillis, boolean alive,
                           List<Counter> counters) implements Result {
    }

    /** A file that could not be read, with a one-line reason naming the bad value. */
    public record Failure(Path path, String message) implements Result {
        @Override
        public String toString() {
            return path + ": " + message;
        }
    }

    private static final class Bad extends Exception {
        Bad(String message) {
            super(message, null, false, false);
        }
    }

    private CountersFileReader() {
    }

    /** Every {@code *.counters} file in {@code dir}, by name; an empty list if the directory does not exist. */
    public static List<Result> readDirectory(Path dir) throws IOException {
        List<Path> files = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir, "*" + CountersFileDescriptor.FILE_SUFFIX)) {
            stream.forEach(files::add);
        }
        files.sort(null);
        List<Result> results = new ArrayList<>(files.size());
        for (Path file : files) {
            results.add(read(file));
        }
        return results;
    }

    /** Reads one file; never throws. */
    public static Result read(Path file) {
        try {
            return parse(file);
        } catch (Bad e) {
            return new Failure(file, e.getMessage());
        } catch (NoSuchFileException e) {
            return new Failure(file, "gone (removed while being read)");
        } catch (IOException | RuntimeException e) {
            return new Failure(file, "cannot be read: " + e);
        }
    }

    private static Snapshot parse(Path file) throws IOException, Bad {
        BasicFileAttributes attrs = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (!attrs.isRegularFile()) {
            throw new Bad("not a regular file");
        }
        long size = attrs.size();
        if (size < CountersFileDescriptor.HEADER_LENGTH) {
            throw new Bad("truncated: " + size + " bytes, shorter than the " + CountersFileDescriptor.HEADER_LENGTH
                    + "-byte header");
        }
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            UnsafeBuffer header = new UnsafeBuffer(readFully(channel, 0, CountersFileDescriptor.HEADER_LENGTH));
            long magic = header.getLong(CountersFileDescriptor.MAGIC_OFFSET);
            if (magic != CountersFileDescriptor.MAGIC) {
                throw new Bad(magic == 0 ? "incomplete: magic not written yet (a process still creating it?)"
                        : "bad magic 0x" + Long.toHexString(magic) + ": not a fabricrpc counters file");
            }
            int version = header.getInt(CountersFileDescriptor.VERSION_OFFSET);
            if (version != CountersFileDescriptor.LAYOUT_VERSION) {
                throw new Bad("layout version " + version + ", this reader reads version "
                        + CountersFileDescriptor.LAYOUT_VERSION);
            }
            int rank = header.getInt(CountersFileDescriptor.RANK_OFFSET);
            long pid = header.getLong(CountersFileDescriptor.PID_OFFSET);
            long start = header.getLong(CountersFileDescriptor.START_TIME_OFFSET);
            int metadataLength = header.getInt(CountersFileDescriptor.METADATA_LENGTH_OFFSET);
            int valuesLength = header.getInt(CountersFileDescriptor.VALUES_LENGTH_OFFSET);
            int jobIdLength = header.getInt(CountersFileDescriptor.JOB_ID_LENGTH_OFFSET);
            check(rank >= 0, "rank " + rank);
            check(pid > 0, "pid " + pid);
            check(valuesLength > 0 && valuesLength % CountersReader.COUNTER_LENGTH == 0
                    && valuesLength <= CountersFileDescriptor.valuesLength(CountersFileDescriptor.MAX_COUNTERS),
                    "values length " + valuesLength);
            check(metadataLength == CountersFileDescriptor.metadataLength(valuesLength),
                    "metadata length " + metadataLength + " (values length " + valuesLength + " needs "
                            + CountersFileDescriptor.metadataLength(valuesLength) + ")");
            check(jobIdLength >= 0 && jobIdLength <= CountersFileDescriptor.JOB_ID_MAX_LENGTH, "job id length " + jobIdLength);
            long expected = CountersFileDescriptor.fileLength(valuesLength);
            if (size < expected) {
                throw new Bad("truncated: " + size + " bytes, its header says " + expected);
            }
            byte[] id = new byte[jobIdLength];
            header.getBytes(CountersFileDescriptor.JOB_ID_OFFSET, id);
            String jobId = ascii(id, "job id");
            UnsafeBuffer metadata = new UnsafeBuffer(readFully(channel, CountersFileDescriptor.metadataOffset(), metadataLength));
            UnsafeBuffer values = new UnsafeBuffer(readFully(channel,
                    CountersFileDescriptor.valuesOffset(metadataLength), valuesLength));
            return new Snapshot(file, pid, rank, jobId, start, isAlive(pid, start), counters(metadata, values));
        }
    }

    private static List<Counter> counters(UnsafeBuffer metadata, UnsafeBuffer values) throws Bad {
        List<Counter> counters = new ArrayList<>();
        int max = values.capacity() / CountersReader.COUNTER_LENGTH;
        for (int id = 0; id < max; id++) {
            int record = CountersReader.metaDataOffset(id);
            int state = metadata.getInt(record);
            if (state == CountersReader.RECORD_UNUSED) {
                break; // records are allocated in order: the rest are unused
            }
            if (state == CountersReader.RECORD_RECLAIMED) {
                continue;
            }
            check(state == CountersReader.RECORD_ALLOCATED, "counter " + id + ": record state " + state);
            int labelLength = metadata.getInt(record + CountersReader.LABEL_OFFSET);
            check(labelLength >= 0 && labelLength <= CountersReader.MAX_LABEL_LENGTH,
                    "counter " + id + ": label length " + labelLength);
            byte[] label = new byte[labelLength];
            metadata.getBytes(record + CountersReader.LABEL_OFFSET + Integer.BYTES, label);
            int type = metadata.getInt(record + CountersReader.TYPE_ID_OFFSET);
            counters.add(new Counter(id, type, ascii(label, "counter " + id + " label"),
                    values.getLong(CountersReader.counterOffset(id))));
        }
        return counters;
    }

    /** True if process {@code pid} exists and started when the file says (a recycled pid is another process). */
    public static boolean isAlive(long pid, long startMillis) {
        Optional<ProcessHandle> process = ProcessHandle.of(pid);
        if (process.isEmpty() || !process.get().isAlive()) {
            return false;
        }
        long actual = CountersFile.processStartMillis(process.get());
        return startMillis == 0 || actual == 0 || Math.abs(actual - startMillis) < 2_000;
    }

    private static ByteBuffer readFully(FileChannel channel, long position, int length) throws IOException, Bad {
        ByteBuffer buffer = ByteBuffer.allocate(length).order(ByteOrder.nativeOrder());
        while (buffer.hasRemaining()) {
            if (channel.read(buffer, position + buffer.position()) < 0) {
                throw new Bad("truncated while being read: ended at byte " + (position + buffer.position()));
            }
        }
        return buffer.flip();
    }

    private static String ascii(byte[] bytes, String what) throws Bad {
        for (byte b : bytes) {
            check(b >= 0x20 && b < 0x7F, what + " holds byte 0x" + Integer.toHexString(b & 0xFF));
        }
        return new String(bytes, StandardCharsets.US_ASCII);
    }

    private static void check(boolean ok, String bad) throws Bad {
        if (!ok) {
            throw new Bad("bad " + bad);
        }
    }
}
