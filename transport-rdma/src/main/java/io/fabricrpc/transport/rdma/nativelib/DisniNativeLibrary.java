package io.fabricrpc.transport.rdma.nativelib;

import java.io.IOException;
import java.io.InputStream;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassHierarchyResolver;
import java.lang.classfile.ClassTransform;
import java.lang.classfile.Opcode;
import java.lang.classfile.instruction.InvokeInstruction;
import java.lang.constant.ClassDesc;
import java.lang.constant.ConstantDescs;
import java.lang.constant.MethodTypeDesc;
import java.lang.invoke.MethodHandles;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Locale;

/**
 * Makes DiSNI 2.1 use this project's {@code libdisni.so} without any {@code java.library.path}.
 *
 * <p>DiSNI's {@code NativeDispatcher} and {@code NativeAffinity} call {@code System.loadLibrary("disni")} in their
 * static initialisers, which only searches {@code java.library.path}. {@link #load()} therefore extracts the library
 * shipped in this jar into a private (0700) temporary directory, {@code System.load}s it, and defines those two
 * DiSNI classes itself with the {@code loadLibrary} call redirected to {@link #loadLibrary(String)}; nothing else in
 * the DiSNI bytecode changes. The JNI symbols then bind from the library already loaded by the same class loader.
 *
 * <p>{@link #load()} must run before the first use of any DiSNI class (this module's own entry points call it).
 * If DiSNI was initialised earlier with a {@code libdisni.so} from {@code java.library.path}, that library is kept.
 *
 * <p>System properties: {@code fabricrpc.disni.library} = an explicit {@code libdisni.so} to load instead of the
 * bundled one; {@code fabricrpc.disni.tmpdir} = where to extract it (default {@code java.io.tmpdir}; it must allow
 * executable mappings). JVM flags users need: {@code --add-exports java.base/sun.nio.ch=ALL-UNNAMED} (checked here)
 * and, to silence JDK 24+ native-access warnings, {@code --enable-native-access=ALL-UNNAMED}.
 *
 * <p>Thread-safe; every method may be called any number of times.
 */
public final class DisniNativeLibrary {
    /** Class-path resource holding the library built by this module's Maven build. */
    public static final String RESOURCE = "/io/fabricrpc/transport/rdma/nativelib/linux-x86_64/libdisni.so";
    /**
     * The stamp this class expects from {@code libdisni.so} ({@code FABRICRPC_NATIVE_VERSION} in disni.c): a library
     * from another build of this module is refused by {@link #load()} rather than failing later in a JNI call.
     */
    public static final int NATIVE_VERSION = 1;
    /** The JVM flag DiSNI needs on JDK 16 and later. */
    public static final String ADD_EXPORTS_FLAG = "--add-exports java.base/sun.nio.ch=ALL-UNNAMED";

    private static final String DISPATCHER = "com.ibm.disni.verbs.impl.NativeDispatcher";
    private static final String AFFINITY = "com.ibm.disni.util.NativeAffinity";
    private static final String RUNTIME_PACKAGES =
            "install the rdma-core runtime (Debian/Ubuntu: apt-get install libibverbs1 librdmacm1 ibverbs-providers rdma-core)";
    private static final Path SYS_INFINIBAND = Path.of("/sys/class/infiniband");

    private static volatile String loadedFrom;

    private DisniNativeLibrary() {
    }

    /**
     * Loads the native library and prepares DiSNI to use it.
     *
     * @return the path the library was loaded from (a deleted temporary file for the bundled copy)
     * @throws NativeLibraryException when the platform is not Linux x86-64, the JVM lacks
     *                                {@value #ADD_EXPORTS_FLAG}, the library or its rdma-core dependencies are missing,
     *                                or DiSNI was already initialised without a native library
     */
    public static String load() {
        String done = loadedFrom;
        if (done != null) {
            return done;
        }
        synchronized (DisniNativeLibrary.class) {
            if (loadedFrom == null) {
                checkPlatform();
                ClassLoader loader = DisniNativeLibrary.class.getClassLoader();
                checkExports(loader);
                String path = loadNative();
                checkNativeVersion(path);
                redirect(loader, DISPATCHER, "com.ibm.disni.verbs.impl.SockAddrIn");
                redirect(loader, AFFINITY, "com.ibm.disni.util.MemoryUtils");
                loadedFrom = path; // volatile write publishes the completed setup to the fast path above
            }
            return loadedFrom;
        }
    }

    /**
     * Target of DiSNI's redirected {@code System.loadLibrary} calls; public only so the rewritten DiSNI classes can
     * link to it. Loads the library if needed.
     *
     * @param name the library name DiSNI asks for; only {@code "disni"} is served
     * @throws UnsatisfiedLinkError for any other name (what {@code System.loadLibrary} would throw)
     */
    public static void loadLibrary(String name) {
        if (!"disni".equals(name)) {
            throw new UnsatisfiedLinkError("fabricrpc serves only libdisni, not lib" + name);
        }
        try {
            load();
        } catch (NativeLibraryException e) {
            UnsatisfiedLinkError error = new UnsatisfiedLinkError(e.getMessage());
            error.initCause(e);
            throw error;
        }
    }

    /**
     * @return the stamp of the loaded library, after {@link #load()} (which already refused a mismatch)
     * @throws NativeLibraryException as {@link #load()}
     */
    public static int loadedNativeVersion() {
        load();
        return nativeVersion();
    }

    private static native int nativeVersion();

    private static void checkNativeVersion(String path) {
        int found;
        try {
            found = nativeVersion();
        } catch (UnsatisfiedLinkError e) {
            throw new NativeLibraryException("libdisni.so at " + path + " has no fabricrpc version stamp (built before "
                    + "version " + NATIVE_VERSION + " or not by this project); this transport-rdma expects version "
                    + NATIVE_VERSION + ": rebuild transport-rdma or drop -Dfabricrpc.disni.library", e);
        }
        if (found != NATIVE_VERSION) {
            throw new NativeLibraryException("libdisni.so at " + path + " is native version " + found
                    + " but this transport-rdma expects version " + NATIVE_VERSION
                    + ": use the library of the same build (the one in the transport-rdma jar)");
        }
    }

    /** @return whether this machine exposes at least one RDMA device ({@code /sys/class/infiniband/*}) */
    public static boolean hasRdmaDevice() {
        if (!Files.isDirectory(SYS_INFINIBAND)) {
            return false;
        }
        try (DirectoryStream<Path> devices = Files.newDirectoryStream(SYS_INFINIBAND)) {
            return devices.iterator().hasNext();
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * @throws NativeLibraryException naming what to install or configure when no RDMA device is present
     */
    public static void requireRdmaDevice() {
        if (!hasRdmaDevice()) {
            throw new NativeLibraryException("no RDMA device: " + SYS_INFINIBAND + " is empty or missing; "
                    + RUNTIME_PACKAGES + " and check `ibv_devices`; without RDMA hardware add a Soft-RoCE device with "
                    + "`rdma link add rxe0 type rxe netdev <interface>` (kernel module rdma_rxe) and use that "
                    + "interface's IPv4 address");
        }
    }

    private static void checkPlatform() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "");
        if (!os.startsWith("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
            throw new NativeLibraryException("RDMA through DiSNI is built for Linux x86-64 only; this JVM runs on "
                    + os + "/" + arch);
        }
    }

    private static void checkExports(ClassLoader loader) {
        Module disni;
        try {
            disni = Class.forName("com.ibm.disni.util.MemoryUtils", false, loader).getModule();
        } catch (ClassNotFoundException e) {
            throw new NativeLibraryException("DiSNI (com.ibm.disni:disni:2.1) is not on the class path", e);
        }
        if (!Object.class.getModule().isExported("sun.nio.ch", disni)) {
            throw new NativeLibraryException("DiSNI needs the JVM flag " + ADD_EXPORTS_FLAG
                    + " (it reads direct-buffer addresses through sun.nio.ch.DirectBuffer); add it to the java command line");
        }
    }

    private static String loadNative() {
        String explicit = System.getProperty("fabricrpc.disni.library");
        if (explicit != null && !explicit.isBlank()) {
            Path file = Path.of(explicit).toAbsolutePath();
            if (!Files.isReadable(file)) {
                throw new NativeLibraryException("fabricrpc.disni.library=" + file + " is not a readable file");
            }
            systemLoad(file);
            return file.toString();
        }
        Path dir = null;
        Path file = null;
        try (InputStream in = DisniNativeLibrary.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new NativeLibraryException("libdisni.so is missing from the class path (" + RESOURCE
                        + "): the transport-rdma jar was built without its native library");
            }
            Path base = Path.of(System.getProperty("fabricrpc.disni.tmpdir", System.getProperty("java.io.tmpdir")));
            // Private directory: nobody else may swap the library between extraction and dlopen.
            dir = Files.createTempDirectory(base, "fabricrpc-disni-",
                    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            file = dir.resolve("libdisni.so");
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            systemLoad(file);
            return file.toString();
        } catch (IOException e) {
            throw new NativeLibraryException("cannot extract libdisni.so into a temporary directory (set "
                    + "-Dfabricrpc.disni.tmpdir to a writable directory): " + e.getMessage(), e);
        } finally {
            // The mapping stays valid after unlink; nothing is left behind in the temporary directory.
            deleteQuietly(file);
            deleteQuietly(dir);
        }
    }

    private static void systemLoad(Path file) {
        try {
            System.load(file.toString());
        } catch (UnsatisfiedLinkError e) {
            String msg = String.valueOf(e.getMessage());
            String hint;
            if (msg.contains("libibverbs") || msg.contains("librdmacm") || msg.contains("libnl")) {
                hint = "the rdma-core user-space libraries are missing: " + RUNTIME_PACKAGES;
            } else if (msg.contains("failed to map segment") || msg.contains("operation not permitted")) {
                hint = "the temporary directory does not allow executable mappings (noexec): set "
                        + "-Dfabricrpc.disni.tmpdir to another directory";
            } else {
                hint = "the library could not be loaded";
            }
            throw new NativeLibraryException(hint + " (" + file + "): " + msg, e);
        }
    }

    /**
     * Defines {@code className} from DiSNI's own bytes with {@code System.loadLibrary} replaced by
     * {@link #loadLibrary(String)}. {@code anchorClass} is any class of the same package, used only for the lookup.
     */
    private static void redirect(ClassLoader loader, String className, String anchorClass) {
        String resource = className.replace('.', '/') + ".class";
        byte[] original;
        try (InputStream in = loader.getResourceAsStream(resource)) {
            if (in == null) {
                throw new NativeLibraryException("DiSNI class " + className + " is not on the class path");
            }
            original = in.readAllBytes();
        } catch (IOException e) {
            throw new NativeLibraryException("cannot read " + resource + ": " + e.getMessage(), e);
        }
        ClassFile classFile = ClassFile.of(ClassFile.ClassHierarchyResolverOption.of(
                ClassHierarchyResolver.defaultResolver().orElse(ClassHierarchyResolver.ofResourceParsing(loader))));
        ClassDesc self = ClassDesc.of(DisniNativeLibrary.class.getName());
        MethodTypeDesc stringToVoid = MethodTypeDesc.of(ConstantDescs.CD_void, ConstantDescs.CD_String);
        int[] replaced = {0};
        byte[] patched = classFile.transformClass(classFile.parse(original),
                ClassTransform.transformingMethodBodies((code, element) -> {
                    if (element instanceof InvokeInstruction call && call.opcode() == Opcode.INVOKESTATIC
                            && call.owner().asInternalName().equals("java/lang/System")
                            && call.name().equalsString("loadLibrary")) {
                        code.invokestatic(self, "loadLibrary", stringToVoid);
                        replaced[0]++;
                    } else {
                        code.with(element);
                    }
                }));
        if (replaced[0] == 0) {
            throw new NativeLibraryException(className + " has no System.loadLibrary call: not the DiSNI 2.1 this "
                    + "module was built for");
        }
        try {
            MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(
                    Class.forName(anchorClass, false, loader), MethodHandles.lookup());
            lookup.defineClass(patched);
        } catch (LinkageError e) {
            if (e.getMessage() == null || !e.getMessage().contains("duplicate")) {
                throw new NativeLibraryException("cannot define the patched " + className + ": " + e, e);
            }
            // DiSNI touched before load(): acceptable only if its own loadLibrary found a libdisni.
            try {
                Class.forName(className, true, loader);
            } catch (LinkageError notLoaded) {
                throw new NativeLibraryException(className + " was initialised before DisniNativeLibrary.load() and "
                        + "found no libdisni on java.library.path; call DisniNativeLibrary.load() before using DiSNI", notLoaded);
            } catch (ClassNotFoundException missing) {
                throw new NativeLibraryException("DiSNI class " + className + " is not on the class path", missing);
            }
        } catch (ReflectiveOperationException e) {
            throw new NativeLibraryException("cannot define the patched " + className + ": " + e, e);
        }
    }

    private static void deleteQuietly(Path path) {
        if (path != null) {
            try {
                Files.deleteIfExists(path);
            } catch (IOException ignored) {
                // best effort: a leftover file in a private 0700 directory is harmless
            }
        }
    }
}
