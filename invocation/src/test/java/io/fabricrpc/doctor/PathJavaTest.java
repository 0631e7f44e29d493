package io.fabricrpc.doctor;

import static org.junit.jupiter.api.Assertions.*;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The java first on PATH: its version parsed from every known spelling, an old one warned about with the fix. */
class PathJavaTest {

    @Test
    void parsesTheFeatureVersionOfEverySpelling() {
        assertEquals(17, PathJava.feature("openjdk version \"17.0.15\" 2025-04-15\nOpenJDK Runtime Environment"));
        assertEquals(25, PathJava.feature("openjdk version \"25\" 2025-09-16\nOpenJDK Runtime Environment Temurin-25+36"));
        assertEquals(25, PathJava.feature("openjdk version \"25.0.1\" 2025-10-21 LTS"));
        assertEquals(8, PathJava.feature("java version \"1.8.0_392\"\nJava(TM) SE Runtime Environment"));
        assertEquals(26, PathJava.feature("openjdk version \"26-ea\" 2026-03-17"));
        assertEquals(11, PathJava.feature("Picked up JAVA_TOOL_OPTIONS: -Xmx1g\nopenjdk version \"11.0.2\" 2019-01-15"));
        assertEquals(-1, PathJava.feature("bash: java: command not found"));
    }

    @Test
    void anOldJavaIsWarnedAboutWithTheFix() {
        CheckResult r = PathJava.result(Path.of("/usr/bin/java"), "openjdk version \"17.0.15\" 2025-04-15");
        assertEquals(Status.WARN, r.status());
        assertTrue(r.observed().contains("Java 17"), r.observed());
        assertTrue(r.fix().contains("JAVA_HOME") && r.fix().contains("PATH"), r.fix());
        assertEquals(Status.OK, PathJava.result(Path.of("/jdk/bin/java"), "openjdk version \"25\"").status());
    }

    @Test
    void runsTheFirstJavaOnThePath(@TempDir Path dir) throws IOException {
        Path first = Files.createDirectories(dir.resolve("first"));
        Path second = Files.createDirectories(dir.resolve("second"));
        fakeJava(first, "17.0.15");
        fakeJava(second, "25.0.1");
        CheckResult r = PathJava.check(dir.resolve("missing") + ":" + first + ":" + second);
        assertEquals(Status.WARN, r.status(), r.toString());
        assertTrue(r.observed().contains("Java 17"), r.observed());
        assertTrue(r.observed().startsWith(first.resolve("java").toString()), r.observed());
        assertEquals(Status.OK, PathJava.check(second.toString()).status());
        CheckResult none = PathJava.check(dir.resolve("missing").toString());
        assertEquals(Status.WARN, none.status());
        assertTrue(none.observed().contains("no java on PATH"), none.observed());
    }

    private static void fakeJava(Path dir, String version) throws IOException {
        Path java = dir.resolve("java");
        Files.writeString(java, "#!/bin/sh\necho 'openjdk version \"" + version + "\" 2025-01-01' >&2\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
}
