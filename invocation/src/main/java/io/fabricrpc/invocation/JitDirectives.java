package io.fabricrpc.invocation;

import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * Installs fabricrpc's HotSpot compiler directives ({@value #RESOURCE}: force-inline the call path into the
 * application's calling loops) once per JVM, through the DiagnosticCommand MBean, so that users need no
 * {@code -XX:CompileCommand} flags. {@link FabricRuntime#join} starts it before the join and waits for it (bounded)
 * before returning, ahead of any call. Turned off with {@code fabric.jit.directives=false}. Thread-safe.
 *
 * <p>Anything in the way (no DiagnosticCommand MBean, a JVM without compiler directives, directives the user
 * installed already, which a match-everything directive on top would override) is logged once and the join goes on.
 */
final class JitDirectives {
    /** Key (FabricConfig transport map or system property) that turns the installation off with {@code false}. */
    static final String KEY = "fabric.jit.directives";
    static final String RESOURCE = "jit-directives.json";
    /** A line of {@code Compiler.directives_print} that only fabricrpc's directive has. */
    static final String MARKER = "+io/fabricrpc/invocation/FabricRuntime.call";

    private static final System.Logger LOG = System.getLogger("fabricrpc.jit");
    private static final String DIAGNOSTIC_COMMAND = "com.sun.management:type=DiagnosticCommand";
    private static final String[] STRING_ARRAY = {String[].class.getName()};
    /** Creating the platform MBean server takes about 0.2 s of CPU: that runs while the join waits for peers. */
    private static final long WAIT_SECONDS = 10;

    /** What the first join of this JVM did. */
    enum Outcome { INSTALLED, ALREADY_PRESENT, DISABLED, SKIPPED, FAILED }

    private static CompletableFuture<Outcome> installation;

    private JitDirectives() {
    }

    /** Starts the installation unless a fabric of this JVM did already; the first caller's key decides. */
    static synchronized CompletableFuture<Outcome> installOnce(Map<String, String> keys) {
        if (installation == null) {
            String value = keys.getOrDefault(KEY, System.getProperty(KEY, "true")).trim();
            if (value.equalsIgnoreCase("false")) {
                LOG.log(System.Logger.Level.DEBUG, KEY + "=false: fabricrpc installs no compiler directives");
                installation = CompletableFuture.completedFuture(Outcome.DISABLED);
            } else {
                if (!value.equalsIgnoreCase("true")) {
                    LOG.log(System.Logger.Level.INFO, KEY + "=" + value + " is neither true nor false; using true");
                }
                CompletableFuture<Outcome> f = new CompletableFuture<>();
                installation = f;
                Thread.ofPlatform().daemon().name("fabricrpc-jit-directives").start(() -> f.complete(install()));
            }
        }
        return installation;
    }

    /** Waits for {@code pending} at most {@value #WAIT_SECONDS} s; a slower installation goes on in the background. */
    static Outcome await(CompletableFuture<Outcome> pending) {
        try {
            return pending.get(WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            LOG.log(System.Logger.Level.INFO, "compiler directives not installed within " + WAIT_SECONDS
                    + " s of the join; the calls start without them (" + KEY + ")");
            return Outcome.FAILED;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Outcome.FAILED;
        } catch (ExecutionException e) {
            return Outcome.FAILED;
        }
    }

    private static Outcome install() {
        Path file = null;
        try {
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            ObjectName name = new ObjectName(DIAGNOSTIC_COMMAND);
            String before = print(server, name);
            if (before.contains(MARKER)) {
                return Outcome.ALREADY_PRESENT; // another class loader's copy of fabricrpc installed them
            }
            if (before.lines().anyMatch(l -> l.equals("Directive:"))) {
                LOG.log(System.Logger.Level.INFO, "this JVM has compiler directives already (-XX:CompilerDirectivesFile"
                        + " or jcmd Compiler.directives_add): fabricrpc leaves them alone and adds none of its own, so"
                        + " its call path is not force-inlined (see " + KEY + ")");
                return Outcome.SKIPPED;
            }
            file = Files.createTempFile("fabricrpc-jit-", ".json"); // rw------- on POSIX
            try (InputStream in = JitDirectives.class.getResourceAsStream(RESOURCE)) {
                if (in == null) {
                    throw new IOException("resource " + RESOURCE + " missing from the class path");
                }
                Files.write(file, in.readAllBytes());
            }
            Object out = server.invoke(name, "compilerDirectivesAdd", new Object[] {new String[] {file.toString()}},
                    STRING_ARRAY);
            if (!print(server, name).contains(MARKER)) {
                LOG.log(System.Logger.Level.INFO, "the JVM did not take fabricrpc's compiler directives: "
                        + String.valueOf(out).strip() + " (" + KEY + ")");
                return Outcome.FAILED;
            }
            LOG.log(System.Logger.Level.DEBUG, "installed fabricrpc's compiler directives (" + KEY + "=false turns"
                    + " this off)");
            return Outcome.INSTALLED;
        } catch (Exception | LinkageError e) {
            LOG.log(System.Logger.Level.INFO, "cannot install fabricrpc's compiler directives (" + e
                    + "); the calls run without them (" + KEY + ")");
            return Outcome.FAILED;
        } finally {
            if (file != null) {
                try {
                    Files.deleteIfExists(file); // the JVM parsed it in compilerDirectivesAdd
                } catch (IOException ignored) {
                    // a leftover temporary file is harmless
                }
            }
        }
    }

    /** This JVM's directive stack as {@code jcmd <pid> Compiler.directives_print} prints it. */
    static String print() throws Exception {
        return print(ManagementFactory.getPlatformMBeanServer(), new ObjectName(DIAGNOSTIC_COMMAND));
    }

    private static String print(MBeanServer server, ObjectName name) throws Exception {
        return String.valueOf(server.invoke(name, "compilerDirectivesPrint", new Object[] {new String[0]},
                STRING_ARRAY));
    }

    /** The inline patterns of {@value #RESOURCE}: {@code +} forces inlining, {@code -} forbids it. */
    static List<String> inlinePatterns() throws IOException {
        List<String> patterns = new ArrayList<>();
        try (InputStream in = JitDirectives.class.getResourceAsStream(RESOURCE)) {
            for (String line : new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).split("\n")) {
                String t = line.strip();
                if (t.startsWith("\"+") || t.startsWith("\"-")) {
                    patterns.add(t.substring(1, t.indexOf('"', 1)));
                }
            }
        }
        return patterns;
    }
}
