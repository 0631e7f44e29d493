package io.fabricrpc.transport.shm;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;

/**
 * Tells whether a process is alive and is the same process that wrote a header (a pid can be recycled).
 * On Linux it reads {@code /proc/<pid>/stat}: a zombie counts as dead, and the start time in clock ticks is the
 * identity. Elsewhere it falls back to {@link ProcessHandle}. Not for hot paths: called by the liveness monitor.
 */
final class ProcessLiveness {
    static final long ABSENT = -1;
    private static final boolean PROC = Files.isReadable(Path.of("/proc/self/stat"));

    private ProcessLiveness() {
    }

    /** The start time of {@code pid}, or {@link #ABSENT} if there is no such live (non-zombie) process. */
    static long startTime(long pid) {
        if (PROC) {
            try {
                String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"), StandardCharsets.US_ASCII);
                // The command name may contain spaces and parentheses; fields resume after the last ')'.
                int close = stat.lastIndexOf(')');
                String[] fields = stat.substring(close + 2).split(" ");
                char state = fields[0].charAt(0);
                if (state == 'Z' || state == 'X' || state == 'x') {
                    return ABSENT;
                }
                return Long.parseLong(fields[19]); // field 22 overall: starttime
            } catch (IOException | RuntimeException e) {
                return ABSENT;
            }
        }
        return ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
                .map(h -> h.info().startInstant().map(Instant::toEpochMilli).orElse(0L))
                .orElse(ABSENT);
    }

    static long currentPid() {
        return ProcessHandle.current().pid();
    }

    /** True if {@code pid} is alive and, when {@code expectedStart} is known (non-zero), started then. */
    static boolean isSameProcessAlive(long pid, long expectedStart) {
        long start = startTime(pid);
        return start != ABSENT && (expectedStart == 0 || start == 0 || start == expectedStart);
    }
}
