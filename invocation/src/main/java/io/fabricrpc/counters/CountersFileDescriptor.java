package io.fabricrpc.counters;

import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.status.CountersReader;

import java.nio.charset.StandardCharsets;

/**
 * The layout of a process's counters file: a header, then Agrona counters metadata and values buffers.
 *
 * <pre>
 *   0                8        12       16                24                32       36       40       44      48
 *   +----------------+--------+--------+-----------------+-----------------+--------+--------+--------+-------+
 *   | magic          | version| rank   | pid             | start time (ms) | meta   | values | job id | (pad) |
 *   |                |        |        |                 |                 | length | length | length |       |
 *   +----------------+--------+--------+-----------------+-----------------+--------+--------+--------+-------+
 *   48 ............................................................ 112 ......................... 128
 *   | job id: ASCII, JOB_ID_MAX_LENGTH bytes at most                     | reserved                  |
 *   128: metadata buffer (meta length = 4 x values length), then values buffer (values length)
 * </pre>
 * Magic is stored last with release, so a reader that sees it sees the whole header. Start time is the process's
 * start (epoch ms), so a recycled pid is not taken for the owner. Every word after the header has one writer: the
 * owner's publisher (Agrona {@link org.agrona.concurrent.status.CountersManager} layout, 512 + 128 bytes a counter).
 */
public final class CountersFileDescriptor {
    public static final long MAGIC = 0x314E54435F435046L; // "FPC_CTN1" little-endian
    public static final int LAYOUT_VERSION = 1;

    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 8;
    public static final int RANK_OFFSET = 12;
    public static final int PID_OFFSET = 16;
    public static final int START_TIME_OFFSET = 24;
    public static final int METADATA_LENGTH_OFFSET = 32;
    public static final int VALUES_LENGTH_OFFSET = 36;
    public static final int JOB_ID_LENGTH_OFFSET = 40;
    public static final int JOB_ID_OFFSET = 48;
    public static final int JOB_ID_MAX_LENGTH = 64;
    public static final int HEADER_LENGTH = 128;

    /** Metadata bytes per values byte (Agrona: 512 of metadata for 128 of value per counter). */
    public static final int METADATA_PER_VALUES = CountersReader.METADATA_LENGTH / CountersReader.COUNTER_LENGTH;
    /** A reader refuses files claiming more counters than this (hostile input must not make it allocate much). */
    public static final int MAX_COUNTERS = 1 << 15;
    public static final String FILE_SUFFIX = ".counters";

    private CountersFileDescriptor() {
    }

    /** Values bytes for {@code counters} counters. */
    public static int valuesLength(int counters) {
        return counters * CountersReader.COUNTER_LENGTH;
    }

    public static int metadataLength(int valuesLength) {
        return valuesLength * METADATA_PER_VALUES;
    }

    public static long fileLength(int valuesLength) {
        return HEADER_LENGTH + (long) metadataLength(valuesLength) + valuesLength;
    }

    public static int metadataOffset() {
        return HEADER_LENGTH;
    }

    public static int valuesOffset(int metadataLength) {
        return HEADER_LENGTH + metadataLength;
    }

    /** The job id as stored: printable ASCII, cut to {@link #JOB_ID_MAX_LENGTH}. */
    public static String storableJobId(String jobId) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < jobId.length() && b.length() < JOB_ID_MAX_LENGTH; i++) {
            char c = jobId.charAt(i);
            b.append(c >= 0x20 && c < 0x7F ? c : '?');
        }
        return b.toString();
    }

    /** Fills every field but magic, then stores magic with release: readers never see a partial header. */
    public static void soHeader(AtomicBuffer header, int rank, long pid, long startTimeMillis, String jobId,
                                int metadataLength, int valuesLength) {
        byte[] id = storableJobId(jobId).getBytes(StandardCharsets.US_ASCII);
        header.putInt(VERSION_OFFSET, LAYOUT_VERSION);
        header.putInt(RANK_OFFSET, rank);
        header.putLong(PID_OFFSET, pid);
        header.putLong(START_TIME_OFFSET, startTimeMillis);
        header.putInt(METADATA_LENGTH_OFFSET, metadataLength);
        header.putInt(VALUES_LENGTH_OFFSET, valuesLength);
        header.putInt(JOB_ID_LENGTH_OFFSET, id.length);
        header.putBytes(JOB_ID_OFFSET, id);
        header.putLongRelease(MAGIC_OFFSET, MAGIC);
    }

    /** Acquire: pairs with the release store of {@link #soHeader}. */
    public static long lvMagic(AtomicBuffer header) {
        return header.getLongAcquire(MAGIC_OFFSET);
    }
}
