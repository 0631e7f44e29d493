package io.fabricrpc.fuzz;

import com.code_intelligence.jazzer.third_party.net.bytebuddy.agent.ByteBuddyAgent;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.ProtectionDomain;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Lets Jazzer 0.24.0 instrument this project's classes on JDK 25: its bundled ASM reads class files up to major
 * version 67 (Java 23) and skips newer ones, so a fuzzing run would see no coverage of the code under test. This
 * transformer, registered before Jazzer's agent, relabels {@code io/fabricrpc/} classes of major 68/69 as 67; the
 * class file format did not change between those versions, and the JVM loads the instrumented result as a
 * Java 23 class. JDK classes are left alone (Jazzer only hooks them for its sanitizers).
 *
 * <p>Every fuzz test class carries {@code @ExtendWith(ClassVersionShim.class)}; the shim installs once per JVM.
 */
public final class ClassVersionShim implements BeforeAllCallback {
    static final int HIGHEST_MAJOR_JAZZER_READS = 67;
    private static final AtomicBoolean INSTALLED = new AtomicBoolean();

    @Override
    public void beforeAll(ExtensionContext context) {
        if (INSTALLED.compareAndSet(false, true)) {
            // The same Instrumentation Jazzer's AgentInstaller gets next: ByteBuddyAgent caches it per JVM.
            Instrumentation instrumentation = ByteBuddyAgent.install();
            instrumentation.addTransformer(new Relabel(), true);
        }
    }

    static byte[] relabel(String className, byte[] classfile) {
        if (className == null || !className.startsWith("io/fabricrpc/") || classfile.length < 8) {
            return null;
        }
        int major = (classfile[6] & 0xff) << 8 | classfile[7] & 0xff;
        int minor = (classfile[4] & 0xff) << 8 | classfile[5] & 0xff;
        if (major <= HIGHEST_MAJOR_JAZZER_READS || minor != 0) {
            return null; // readable already, or a preview class file, which must not be relabelled
        }
        byte[] copy = classfile.clone();
        copy[6] = 0;
        copy[7] = (byte) HIGHEST_MAJOR_JAZZER_READS;
        return copy;
    }

    private static final class Relabel implements ClassFileTransformer {
        @Override
        public byte[] transform(Module module, ClassLoader loader, String className, Class<?> redefined,
                                ProtectionDomain domain, byte[] classfile) {
            return relabel(className, classfile);
        }
    }
}
