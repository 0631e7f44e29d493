package io.fabricrpc.doctor;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.fabricrpc.doctor.MemoryEstimate.bytes;

/**
 * The checks that need no transport module: JDK, JVM flags, shared memory, memory locking, map count, hugepages.
 * Each is a pure function of a {@link DoctorContext} (its {@link Host} is the only view of the machine) and
 * returns a result instead of throwing.
 */
public final class HostChecks {
    /** The four flags every fabricrpc JVM needs (README, "JVM flags"), as one line to paste. */
    public static final String REQUIRED_FLAGS = "--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow"
            + " --add-exports=java.base/jdk.internal.misc=ALL-UNNAMED --add-exports=java.base/sun.nio.ch=ALL-UNNAMED";
    public static final String DEFAULT_SHM_DIR = "/dev/shm";
    /** Docker's default /dev/shm is 64 MiB: below this a tmpfs is called tiny. */
    static final long TINY_SHM_BYTES = 256L << 20;
    /** The kernel's default vm.max_map_count. */
    static final long DEFAULT_MAX_MAP_COUNT = 65530;

    private HostChecks() {
    }

    /** Every check of this class, in display order. */
    public static List<CheckResult> all(DoctorContext ctx) {
        List<CheckResult> results = new ArrayList<>();
        results.add(jdk(ctx));
        results.add(jvmFlags(ctx));
        results.add(shmMount(ctx));
        results.add(shmSpace(ctx));
        results.add(shmDirectory(ctx));
        results.add(memlock(ctx));
        results.add(maxMapCount(ctx));
        results.add(hugepages(ctx));
        return results;
    }

    public static CheckResult jdk(DoctorContext ctx) {
        JvmView jvm = ctx.host().jvm();
        return jvm.feature() >= 25
                ? CheckResult.ok("jdk", "Java " + jvm.version())
                : new CheckResult("jdk", Status.FAIL, "Java " + jvm.version() + " (need 25 or newer)",
                "install a JDK 25+ (e.g. Temurin 25) and point JAVA_HOME at it");
    }

    /**
     * The flags in effect. Missing exports break at once (Agrona's IllegalAccessError; DiSNI for RDMA): fail. Missing
     * native access or unsafe memory access only make JDK 25 print warnings today: warn.
     */
    public static CheckResult jvmFlags(DoctorContext ctx) {
        JvmView jvm = ctx.host().jvm();
        List<String> missing = new ArrayList<>();
        Status status = Status.OK;
        if (!jvm.exportsInternalMisc()) {
            missing.add("--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED");
            status = Status.FAIL;
        }
        if (!jvm.exportsNioCh()) {
            missing.add("--add-exports=java.base/sun.nio.ch=ALL-UNNAMED");
            status = ctx.usesRdma() ? Status.FAIL : worst(status, Status.WARN);
        }
        if (!jvm.nativeAccess()) {
            missing.add("--enable-native-access=ALL-UNNAMED");
            status = worst(status, Status.WARN);
        }
        if (!"allow".equals(jvm.unsafeMemoryAccess())) {
            missing.add("--sun-misc-unsafe-memory-access=allow");
            status = worst(status, Status.WARN);
        }
        if (missing.isEmpty()) {
            return CheckResult.ok("jvm-flags", "native access on; jdk.internal.misc and sun.nio.ch exported; "
                    + "sun.misc.Unsafe memory access allowed");
        }
        return new CheckResult("jvm-flags", status, "missing in this JVM: " + String.join(" ", missing),
                "start every fabricrpc JVM with: " + REQUIRED_FLAGS);
    }

    /** The base directory shared memory goes to ({@code shm.dir}, default {@code /dev/shm}). */
    public static Path shmBase(DoctorContext ctx) {
        return Path.of(ctx.settings().getOrDefault("shm.dir", DEFAULT_SHM_DIR));
    }

    public static CheckResult shmMount(DoctorContext ctx) {
        if (!ctx.usesShm()) {
            return CheckResult.skip("shm-mount", "transport " + ctx.transport() + " does not use shared memory");
        }
        Path base = shmBase(ctx);
        String real;
        try {
            real = base.toRealPath().toString();
        } catch (IOException e) {
            return CheckResult.skip("shm-mount", "shm.dir " + base + " does not exist (see shm-dir)");
        }
        Optional<String> mountinfo = ctx.host().read("/proc/self/mountinfo");
        Optional<ProcFiles.Mount> mount = mountinfo.flatMap(text -> ProcFiles.mountOf(text, real));
        if (mount.isEmpty()) {
            return new CheckResult("shm-mount", Status.WARN, "cannot find the mount of " + real
                    + " in /proc/self/mountinfo", "make shm.dir a tmpfs (memory-backed), e.g. /dev/shm");
        }
        ProcFiles.Mount m = mount.get();
        String observed = real + " on " + m.mountPoint() + " (" + m.fsType() + ", " + m.options()
                + (m.has("noexec") ? "; noexec is fine" : "") + ")";
        if (m.has("ro")) {
            return new CheckResult("shm-mount", Status.FAIL, observed + ": read-only",
                    "point -Dshm.dir at a writable tmpfs, or remount it read-write");
        }
        if (!m.fsType().equals("tmpfs")) {
            return new CheckResult("shm-mount", Status.WARN, observed + ": not a tmpfs, segments are written to "
                    + m.fsType(), "point -Dshm.dir at a tmpfs (e.g. /dev/shm) so segments stay in memory");
        }
        return CheckResult.ok("shm-mount", observed);
    }

    public static CheckResult shmSpace(DoctorContext ctx) {
        if (!ctx.usesShm()) {
            return CheckResult.skip("shm-space", "transport " + ctx.transport() + " does not use shared memory");
        }
        Path base = shmBase(ctx);
        if (!Files.isDirectory(base)) {
            return CheckResult.skip("shm-space", "shm.dir " + base + " does not exist (see shm-dir)");
        }
        Host.Space space;
        try {
            space = ctx.host().space().of(base);
        } catch (IOException | RuntimeException e) {
            return new CheckResult("shm-space", Status.WARN, "cannot read the free space of " + base + ": " + e,
                    "check that " + base + " is a mounted file system");
        }
        MemoryEstimate need = MemoryEstimate.of(ctx.processes(), ctx.threads(), ctx.messenger());
        // Every process of an shm job is on this host and shares this file system; hybrid hosts hold an unknown share.
        long local = ctx.transport().equals("shm") ? ctx.processes() : 1;
        long atStart = need.initialBytes() * local;
        long atMost = need.maximumBytes() * local;
        String observed = bytes(space.usableBytes()) + " free of " + bytes(space.totalBytes()) + " in " + base
                + "; the job needs about " + bytes(atStart) + " at start, up to " + bytes(atMost)
                + " (" + need.shape() + ")";
        String enlarge = "enlarge it (docker run --shm-size=1g; mount -o remount,size=2g " + base
                + ") or point -Dshm.dir at a larger tmpfs";
        if (space.usableBytes() < atStart) {
            return new CheckResult("shm-space", Status.FAIL, observed, enlarge);
        }
        if (space.usableBytes() < atMost || space.totalBytes() < TINY_SHM_BYTES) {
            return new CheckResult("shm-space", Status.WARN, observed
                    + (space.totalBytes() < TINY_SHM_BYTES ? "; a tiny tmpfs" : ""), enlarge);
        }
        return CheckResult.ok("shm-space", observed);
    }

    /** The shm transport's per-user directory name, sanitised as the transport does. */
    public static Path shmUserDirectory(DoctorContext ctx) {
        return shmBase(ctx).resolve("fabricrpc-" + ctx.host().user().replaceAll("[^A-Za-z0-9._-]", "_"));
    }

    public static CheckResult shmDirectory(DoctorContext ctx) {
        if (!ctx.usesShm()) {
            return CheckResult.skip("shm-dir", "transport " + ctx.transport() + " does not use shared memory");
        }
        Path base = shmBase(ctx);
        if (!Files.isDirectory(base)) {
            return new CheckResult("shm-dir", Status.FAIL, "shm.dir " + base + " does not exist",
                    "create it or set -Dshm.dir to an existing tmpfs (default /dev/shm)");
        }
        Path dir = shmUserDirectory(ctx);
        PosixFileAttributes attrs;
        try {
            attrs = Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return Files.isWritable(base)
                    ? CheckResult.ok("shm-dir", dir + " does not exist yet; the first join creates it with mode 0700")
                    : new CheckResult("shm-dir", Status.FAIL, base + " is not writable, so " + dir
                    + " cannot be created", "make " + base + " writable (mode 1777 like /dev/shm) or set -Dshm.dir");
        } catch (IOException | UnsupportedOperationException e) {
            return new CheckResult("shm-dir", Status.FAIL, "cannot read " + dir + ": " + e,
                    "point -Dshm.dir at a POSIX file system (a tmpfs)");
        }
        String perms = PosixFilePermissions.toString(attrs.permissions());
        String owner = attrs.owner().getName();
        String observed = dir + " owner " + owner + ", mode " + perms;
        if (!attrs.isDirectory()) {
            return new CheckResult("shm-dir", Status.FAIL, observed + ": not a directory",
                    "remove it (rm " + dir + "); the next join recreates it");
        }
        if (!owner.equals(ctx.host().user())) {
            return new CheckResult("shm-dir", Status.FAIL, observed + ": owned by " + owner + ", not by "
                    + ctx.host().user(), "remove it as its owner or root (rm -r " + dir + ") or use another -Dshm.dir");
        }
        if (!perms.equals("rwx------")) {
            return new CheckResult("shm-dir", Status.FAIL, observed + ": others may access it", "chmod 700 " + dir);
        }
        return CheckResult.ok("shm-dir", observed);
    }

    /**
     * Registered RDMA memory is pinned against RLIMIT_MEMLOCK unless the process holds CAP_IPC_LOCK. Fails below the
     * messenger memory a process registers at start; warns below what it may grow to.
     */
    public static CheckResult memlock(DoctorContext ctx) {
        if (!ctx.usesRdma()) {
            return CheckResult.skip("memlock", "transport " + ctx.transport() + " registers no memory");
        }
        String fix = "ulimit -l unlimited (or '* - memlock unlimited' in /etc/security/limits.conf, "
                + "LimitMEMLOCK=infinity for systemd, docker run --ulimit memlock=-1 --cap-add IPC_LOCK)";
        Optional<ProcFiles.Limit> limit = ctx.host().read("/proc/self/limits")
                .flatMap(text -> ProcFiles.limit(text, "Max locked memory"));
        if (limit.isEmpty()) {
            return new CheckResult("memlock", Status.WARN, "cannot read 'Max locked memory' in /proc/self/limits",
                    "check ulimit -l; " + fix);
        }
        ProcFiles.Limit l = limit.get();
        MemoryEstimate need = MemoryEstimate.of(ctx.processes(), ctx.threads(), ctx.messenger());
        String observed = "RLIMIT_MEMLOCK soft " + bytes(l.soft()) + ", hard " + bytes(l.hard());
        if (l.softUnlimited()) {
            return CheckResult.ok("memlock", observed);
        }
        boolean ipcLock = ctx.host().read("/proc/self/status")
                .flatMap(text -> ProcFiles.hasEffectiveCapability(text, ProcFiles.CAP_IPC_LOCK)).orElse(false);
        if (ipcLock) {
            return CheckResult.ok("memlock", observed + "; CAP_IPC_LOCK held, so the limit does not apply");
        }
        observed += "; registration needs about " + bytes(need.initialBytes()) + " at start, up to "
                + bytes(need.maximumBytes()) + " plus allocate() regions (" + need.shape() + ")";
        if (l.soft() < need.initialBytes()) {
            return new CheckResult("memlock", Status.FAIL, observed, fix);
        }
        if (l.soft() < need.maximumBytes()) {
            return new CheckResult("memlock", Status.WARN, observed, fix);
        }
        return CheckResult.ok("memlock", observed);
    }

    public static CheckResult maxMapCount(DoctorContext ctx) {
        Optional<String> text = ctx.host().read("/proc/sys/vm/max_map_count");
        long value;
        try {
            value = Long.parseLong(text.orElse("").trim());
        } catch (NumberFormatException e) {
            return CheckResult.skip("max-map-count", "cannot read /proc/sys/vm/max_map_count");
        }
        String observed = "vm.max_map_count = " + value;
        // Each shared-memory segment and registered region is a mapping; the JVM itself needs thousands.
        return value < DEFAULT_MAX_MAP_COUNT
                ? new CheckResult("max-map-count", Status.WARN, observed + " (below the kernel default "
                + DEFAULT_MAX_MAP_COUNT + ")", "sysctl -w vm.max_map_count=262144 (persist it in /etc/sysctl.d/)")
                : CheckResult.ok("max-map-count", observed);
    }

    /** Informational: RDMA regions of 2 MiB and more use hugepages when free ones exist, plain pages otherwise. */
    public static CheckResult hugepages(DoctorContext ctx) {
        if (!ctx.usesRdma()) {
            return CheckResult.skip("hugepages", "only RDMA regions use hugepages");
        }
        Optional<String> text = ctx.host().read("/proc/meminfo");
        if (text.isEmpty()) {
            return CheckResult.skip("hugepages", "cannot read /proc/meminfo");
        }
        Map<String, Long> info = ProcFiles.meminfo(text.get());
        long total = info.getOrDefault("HugePages_Total", 0L);
        long free = info.getOrDefault("HugePages_Free", 0L);
        long sizeKb = info.getOrDefault("Hugepagesize", 2048L);
        String observed = free + " of " + total + " hugepages of " + bytes(sizeKb * 1024) + " free";
        return free > 0
                ? CheckResult.ok("hugepages", observed)
                : new CheckResult("hugepages", Status.OK, observed + "; regions use plain pages (informational)",
                "optional: sysctl vm.nr_hugepages=N to back regions of 2 MiB and more with hugepages");
    }

    static Status worst(Status a, Status b) {
        return a.compareTo(b) >= 0 ? a : b;
    }
}
