package io.fabricrpc.transport.shm;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * The header every shared-memory file of this transport starts with, so any process can tell whose file it is,
 * whether the owner is alive, dead or merely slow, and whether the file is complete.
 *
 * <pre>
 *  0        8        12       16                24                32                40       44       48
 *  +--------+--------+--------+-----------------+-----------------+-----------------+--------+--------+
 *  | magic  | version| kind   | owner pid       | owner start     | endpoint id     | state  | (pad)  |
 *  +--------+--------+--------+-----------------+-----------------+-----------------+--------+--------+
 *  48                56                64                72                80 ....... 4096
 *  +-----------------+-----------------+-----------------+-----------------+--------------+
 *  | heartbeat (ms)  | region id       | data length     | access          | reserved     |
 *  +-----------------+-----------------+-----------------+-----------------+--------------+
 *  4096: data (regions) or the message ring (endpoint files)
 * </pre>
 * <ul>
 *   <li>magic is published last with a release store: a reader that sees it (acquire) sees a complete header.</li>
 *   <li>owner start is the owner process's start time (kernel clock ticks since boot from /proc, or epoch ms
 *       elsewhere), so a recycled pid is not mistaken for the owner.</li>
 *   <li>state ({@link #STATE_ACTIVE}, {@link #STATE_CLOSED}) and heartbeat are written only by the owner
 *       (release) and read by peers (acquire). Peers declare the owner failed when its process is gone, when
 *       state is closed, or when the heartbeat is older than their timeout.</li>
 * </ul>
 */
final class SegmentHeaderDescriptor {
    static final long MAGIC = 0x3148535F43505246L; // "FRPC_SH1" little-endian
    static final int LAYOUT_VERSION = 1;

    static final int KIND_ENDPOINT = 1;
    static final int KIND_REGION = 2;

    static final int STATE_ACTIVE = 1;
    static final int STATE_CLOSED = 2;

    static final int MAGIC_OFFSET = 0;
    static final int VERSION_OFFSET = 8;
    static final int KIND_OFFSET = 12;
    static final int OWNER_PID_OFFSET = 16;
    static final int OWNER_START_OFFSET = 24;
    static final int ENDPOINT_ID_OFFSET = 32;
    static final int STATE_OFFSET = 40;
    static final int HEARTBEAT_OFFSET = 48;
    static final int REGION_ID_OFFSET = 56;
    static final int DATA_LENGTH_OFFSET = 64;
    static final int ACCESS_OFFSET = 72;
    /** Data starts on its own page so that it is page-aligned in every mapping. */
    static final int HEADER_LENGTH = 4096;

    static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    static final VarHandle BYTE = ValueLayout.JAVA_BYTE.varHandle();

    private SegmentHeaderDescriptor() {
    }

    /** Fills every field but magic, then publishes magic (release) so readers never see a partial header. */
    static void initialize(MemorySegment file, int kind, long pid, long startTime, long endpointId, long regionId,
                           long dataLength, int access) {
        file.set(ValueLayout.JAVA_INT, VERSION_OFFSET, LAYOUT_VERSION);
        file.set(ValueLayout.JAVA_INT, KIND_OFFSET, kind);
        file.set(ValueLayout.JAVA_LONG, OWNER_PID_OFFSET, pid);
        file.set(ValueLayout.JAVA_LONG, OWNER_START_OFFSET, startTime);
        file.set(ValueLayout.JAVA_LONG, ENDPOINT_ID_OFFSET, endpointId);
        file.set(ValueLayout.JAVA_LONG, REGION_ID_OFFSET, regionId);
        file.set(ValueLayout.JAVA_LONG, DATA_LENGTH_OFFSET, dataLength);
        file.set(ValueLayout.JAVA_LONG, ACCESS_OFFSET, access);
        file.set(ValueLayout.JAVA_LONG, HEARTBEAT_OFFSET, System.currentTimeMillis());
        file.set(ValueLayout.JAVA_INT, STATE_OFFSET, STATE_ACTIVE);
        LONG.setRelease(file, (long) MAGIC_OFFSET, MAGIC); // release: publishes the fields above
    }

    static boolean isComplete(MemorySegment file) {
        return file.byteSize() >= HEADER_LENGTH && (long) LONG.getAcquire(file, (long) MAGIC_OFFSET) == MAGIC;
    }

    static int version(MemorySegment file) {
        return file.get(ValueLayout.JAVA_INT, VERSION_OFFSET);
    }

    static int kind(MemorySegment file) {
        return file.get(ValueLayout.JAVA_INT, KIND_OFFSET);
    }

    static long ownerPid(MemorySegment file) {
        return file.get(ValueLayout.JAVA_LONG, OWNER_PID_OFFSET);
    }

    static long ownerStart(MemorySegment file) {
        return file.get(ValueLayout.JAVA_LONG, OWNER_START_OFFSET);
    }

    static long endpointId(MemorySegment file) {
        return file.get(ValueLayout.JAVA_LONG, ENDPOINT_ID_OFFSET);
    }

    static long regionId(MemorySegment file) {
        return file.get(ValueLayout.JAVA_LONG, REGION_ID_OFFSET);
    }

    static long dataLength(MemorySegment file) {
        return file.get(ValueLayout.JAVA_LONG, DATA_LENGTH_OFFSET);
    }

    static int access(MemorySegment file) {
        return (int) file.get(ValueLayout.JAVA_LONG, ACCESS_OFFSET);
    }

    static int state(MemorySegment file) {
        return (int) INT.getAcquire(file, (long) STATE_OFFSET); // acquire: pairs with the owner's release
    }

    static void setState(MemorySegment file, int state) {
        INT.setRelease(file, (long) STATE_OFFSET, state); // release: peers reading CLOSED see all earlier writes
    }

    static long heartbeat(MemorySegment file) {
        return (long) LONG.getAcquire(file, (long) HEARTBEAT_OFFSET);
    }

    static void beat(MemorySegment file, long nowMillis) {
        LONG.setRelease(file, (long) HEARTBEAT_OFFSET, nowMillis); // release: a liveness signal, ordered after state
    }
}
