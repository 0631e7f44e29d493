package io.fabricrpc.doctor;

/**
 * What the running JVM has in effect, as opposed to what its command line says: the feature version, whether
 * native access is enabled for the class path, which {@code java.base} packages are exported to it, and the
 * {@code sun.misc.Unsafe} memory-access mode.
 *
 * @param feature              {@code Runtime.version().feature()}
 * @param version              the full version string, for display
 * @param nativeAccess         whether the unnamed module may call restricted methods without warnings
 * @param exportsInternalMisc  whether {@code java.base/jdk.internal.misc} is exported to the class path
 * @param exportsNioCh         whether {@code java.base/sun.nio.ch} is exported to the class path
 * @param unsafeMemoryAccess   the {@code --sun-misc-unsafe-memory-access} value, or null when not given
 */
public record JvmView(int feature, String version, boolean nativeAccess, boolean exportsInternalMisc,
                      boolean exportsNioCh, String unsafeMemoryAccess) {

    /** The JVM this code runs in. */
    public static JvmView current() {
        Module self = JvmView.class.getModule();
        Module base = Object.class.getModule();
        return new JvmView(Runtime.version().feature(), Runtime.version().toString(), self.isNativeAccessEnabled(),
                base.isExported("jdk.internal.misc", self), base.isExported("sun.nio.ch", self),
                // The launcher turns --sun-misc-unsafe-memory-access=X into this property.
                System.getProperty("sun.misc.unsafe.memory.access"));
    }
}
