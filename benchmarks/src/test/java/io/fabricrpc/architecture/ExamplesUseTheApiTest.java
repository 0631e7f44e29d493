package io.fabricrpc.architecture;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the README promises an application: everything it touches is in io.fabricrpc.api, except the few types the
 * README's "Where the types live" names. Checked on the user-facing examples under examples/, compiled here
 * against this build's class path.
 */
class ExamplesUseTheApiTest {
    /** The documented exceptions to io.fabricrpc.api (README, "Where the types live"). */
    static final Set<String> OUTSIDE_THE_API = Set.of(
            "io.fabricrpc.aggregation.Aggregation", "io.fabricrpc.aggregation.AggregationConfig",
            "io.fabricrpc.fabric.LocalLauncher", "io.fabricrpc.fabric.LocalLauncher$Builder",
            "io.fabricrpc.fabric.LocalLauncher$LaunchException", "io.fabricrpc.fabric.JoinRefusedException",
            "io.fabricrpc.mailbox.AllPortsBusyException", "io.fabricrpc.mailbox.MailboxTimeoutException",
            "io.fabricrpc.messaging.ChannelPoisonedException", "io.fabricrpc.messaging.PoisonReason",
            "io.fabricrpc.doctor.JoinCheckException", "io.fabricrpc.serialization.WrongContextException",
            "io.fabricrpc.serialization.FunctionNotAllowedException",
            "io.fabricrpc.serialization.UnregisteredClassException");

    @Test
    void examplesUseOnlyTheApiAndTheDocumentedExceptions(@TempDir Path out) throws IOException {
        Path examples = Path.of(System.getProperty("basedir", "."), "..", "examples").normalize();
        assertTrue(Files.isDirectory(examples), "no examples directory at " + examples);
        List<String> sources;
        try (Stream<Path> files = Files.walk(examples)) {
            sources = files.filter(p -> p.toString().endsWith(".java") && p.toString().contains("/src/main/java/"))
                    .map(Path::toString).toList();
        }
        assertFalse(sources.isEmpty(), "no example sources under " + examples);
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        List<String> args = new ArrayList<>(List.of("-d", out.toString(), "-cp", System.getProperty("java.class.path")));
        args.addAll(sources);
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        assertEquals(0, javac.run(null, null, errors, args.toArray(String[]::new)), errors.toString());

        JavaClasses app = new ClassFileImporter().importPath(out);
        DescribedPredicate<JavaClass> allowed = DescribedPredicate.describe(
                "are in java.*, io.fabricrpc.api, the example itself or the README's documented exceptions",
                c -> allowed(c.getBaseComponentType(), app));
        classes().should().onlyDependOnClassesThat(allowed).check(app);
    }

    private static boolean allowed(JavaClass c, JavaClasses app) {
        return c.isPrimitive() || c.getPackageName().startsWith("java.") || c.getPackageName().equals("io.fabricrpc.api")
                || OUTSIDE_THE_API.contains(c.getName()) || app.contain(c.getName());
    }
}
