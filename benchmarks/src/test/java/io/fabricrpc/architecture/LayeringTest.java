package io.fabricrpc.architecture;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The layers of the library, as the README's layout section states them: the public API depends on nothing of the
 * implementation, the transport SPI on the JDK and the API only, Netty stays in the control plane, Kryo in
 * serialization, and the transports build on the SPI, never on the runtime above it. Demos and benchmarks are
 * applications and are not checked.
 */
class LayeringTest {
    private static final String[] RUNTIME = {"io.fabricrpc.invocation..", "io.fabricrpc.fabric..",
        "io.fabricrpc.messaging..", "io.fabricrpc.mailbox..", "io.fabricrpc.serialization..", "io.fabricrpc.memory..",
        "io.fabricrpc.aggregation..", "io.fabricrpc.counters.."};

    private static JavaClasses library;

    @BeforeAll
    static void importLibrary() {
        library = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(location -> !location.contains("-tests.jar") && !location.contains("/test-classes/"))
                .withImportOption(location -> !location.contains("/io/fabricrpc/benchmarks/")
                        && !location.contains("/io/fabricrpc/demo/") && !location.contains("/io/fabricrpc/mcts/"))
                .importPackages("io.fabricrpc");
        // Guards against a vacuous pass: each layer the rules name must have been found.
        for (String layer : new String[] {"api", "transport", "transport.shm", "transport.rdma", "fabric",
            "serialization", "invocation", "aggregation", "doctor"}) {
            assertTrue(library.containPackage("io.fabricrpc." + layer), "no classes of io.fabricrpc." + layer);
        }
    }

    @Test
    void theApiDependsOnTheJdkOnly() {
        classes().that().resideInAPackage("io.fabricrpc.api..")
                .should().onlyDependOnClassesThat().resideInAnyPackage("java..", "io.fabricrpc.api..")
                .check(library);
    }

    @Test
    void theTransportSpiDependsOnTheJdkAndTheApiOnly() {
        classes().that().resideInAPackage("io.fabricrpc.transport")
                .should().onlyDependOnClassesThat().resideInAnyPackage("java..", "jdk.jfr..", "io.fabricrpc.api..",
                        "io.fabricrpc.transport")
                .check(library);
    }

    @Test
    void theDoctorSpiDependsOnTheJdkTheApiAndTheTransportSpiOnly() {
        classes().that().resideInAPackage("io.fabricrpc.doctor")
                .should().onlyDependOnClassesThat().resideInAnyPackage("java..", "com.sun.security.auth..",
                        "io.fabricrpc.api..", "io.fabricrpc.transport", "io.fabricrpc.doctor")
                .check(library);
    }

    @Test
    void nettyIsUsedOnlyByTheControlPlane() {
        noClasses().that().resideOutsideOfPackage("io.fabricrpc.fabric..")
                .should().dependOnClassesThat().resideInAPackage("io.netty..")
                .check(library);
    }

    @Test
    void kryoIsUsedOnlyBySerialization() {
        noClasses().that().resideOutsideOfPackage("io.fabricrpc.serialization..")
                .should().dependOnClassesThat().resideInAPackage("com.esotericsoftware..")
                .check(library);
    }

    /** The doctor's check SPI ({@code io.fabricrpc.doctor}) is one the transports implement, like the transport SPI. */
    @Test
    void transportsBuildOnTheSpiNotOnTheRuntime() {
        noClasses().that().resideInAnyPackage("io.fabricrpc.transport.shm..", "io.fabricrpc.transport.rdma..")
                .should().dependOnClassesThat().resideInAnyPackage(RUNTIME)
                .check(library);
    }

    @Test
    void theSpiKnowsNoTransport() {
        noClasses().that().resideInAPackage("io.fabricrpc.transport")
                .should().dependOnClassesThat().resideInAnyPackage("io.fabricrpc.transport.shm..",
                        "io.fabricrpc.transport.rdma..")
                .check(library);
    }
}
